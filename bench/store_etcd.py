"""EtcdStore throughput, watch latency and leader failover time; prints JSON. Not a test.

    .venv/bin/python bench/store_etcd.py [--url etcd://127.0.0.1:2379] [--puts N] [--failovers N]

Without ``--url`` it starts Debian's etcd on free 127.0.0.1 ports (one member, etcd's default raft
timings) and removes it afterwards. Measures: sequential single puts, puts inside 128-op txns, watch
latency (from just before a put to the watcher receiving its event), and two election timings with
a lease TTL of 3 s: failover (the leader stops renewing; time from its last renewal until the
standby leads: TTL plus etcd's 500 ms expiry check, by design) and hand-over by ``resign``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from loadmaster.runtime.plane.leadership.leader_etcd import EtcdLeaderElector
from loadmaster.store.etcd import EtcdStore
from loadmaster.store.interface import MAX_TXN_OPS, Event, Put
from loadmaster.testing.etcd_cluster import EtcdCluster

VALUE = b"x" * 200  # about one encoded replica record
TTL_S = 3


def milliseconds(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(value * 1000 for value in seconds)
    return {
        "p50": round(statistics.median(ordered), 2),
        "p99": round(ordered[max(0, int(len(ordered) * 0.99) - 1)], 2),
        "max": round(ordered[-1], 2),
    }


async def sequential_puts(store: EtcdStore, count: int) -> dict[str, Any]:
    latencies = []
    for i in range(count):
        started = time.perf_counter()
        await store.put(f"/seq/{i:06d}", VALUE)
        latencies.append(time.perf_counter() - started)
    return {"puts_per_s": round(count / sum(latencies)), "latency_ms": milliseconds(latencies)}


async def txn_puts(store: EtcdStore, count: int) -> dict[str, Any]:
    batches = max(1, count // MAX_TXN_OPS)
    started = time.perf_counter()
    for batch in range(batches):
        await store.txn([Put(f"/txn/{batch:04d}/{i:03d}", VALUE) for i in range(MAX_TXN_OPS)])
    elapsed = time.perf_counter() - started
    return {"ops_per_txn": MAX_TXN_OPS, "txns": batches, "puts_per_s": round(batches * MAX_TXN_OPS / elapsed)}


async def watch_latency(store: EtcdStore, count: int) -> dict[str, Any]:
    sent_at: dict[int, float] = {}
    latencies: list[float] = []
    done = asyncio.Event()

    async def receive(events: Any) -> None:
        event: Event
        async for event in events:
            latencies.append(time.perf_counter() - sent_at[event.revision])
            if len(latencies) == count:
                done.set()
                return

    start = await store.revision() + 1
    receiver = asyncio.create_task(receive(store.watch("/lat/", start)))
    await asyncio.sleep(0.1)  # let the watch stream open before the first put
    for i in range(count):
        # The revision is known only after the put returns, so record the send time under the
        # revision the put is going to get: nothing else writes to this etcd meanwhile.
        sent_at[start + i] = time.perf_counter()
        assert await store.put(f"/lat/{i}", VALUE) == start + i
    await asyncio.wait_for(done.wait(), 10)
    await receiver
    return {"events": count, "latency_ms": milliseconds(latencies)}


async def failover(url: str, prefix: str) -> dict[str, float]:
    """One failover (leader stops renewing) and one hand-over (resign), each timed in seconds."""
    stores = [await EtcdStore.connect(url, prefix=prefix) for _ in range(3)]
    try:
        a, b, c = (EtcdLeaderElector(store, f"server-{i}", ttl_s=TTL_S) for i, store in enumerate(stores))
        await a.campaign()  # a never runs its keepalive: its last renewal is this campaign
        last_renewal = time.perf_counter()
        await b.campaign()
        failover_s = time.perf_counter() - last_renewal
        c_campaign = asyncio.create_task(c.campaign())
        await asyncio.sleep(0.2)  # c is now watching the key
        resigned = time.perf_counter()
        await b.resign()
        await c_campaign
        handover_s = time.perf_counter() - resigned
        await c.resign()
        return {"failover_s": round(failover_s, 3), "resign_handover_s": round(handover_s, 4)}
    finally:
        for store in stores:
            await store.close()


async def run(url: str, puts: int, failovers: int) -> dict[str, Any]:
    store = await EtcdStore.connect(url, prefix="/bench")
    try:
        result: dict[str, Any] = {
            "sequential_put": await sequential_puts(store, puts),
            "txn_put": await txn_puts(store, puts * 10),
            "watch": await watch_latency(store, min(puts, 500)),
        }
    finally:
        await store.close()
    runs = [await failover(url, f"/bench-election-{i}") for i in range(failovers)]
    result["election"] = {
        "lease_ttl_s": TTL_S,
        "runs": runs,
        "failover_s_median": statistics.median(run["failover_s"] for run in runs),
        "resign_handover_s_median": statistics.median(run["resign_handover_s"] for run in runs),
    }
    return result


@contextmanager
def etcd_url(url: str | None) -> Iterator[tuple[str, str]]:
    if url is not None:
        yield url, "external"
        return
    with EtcdCluster(size=1, heartbeat_ms=100, election_timeout_ms=1000) as cluster:
        yield cluster.url, "local etcd 3.4 (Debian), 1 member, default raft timings"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="etcd://host:port[,host:port] (default: start a local etcd)")
    parser.add_argument("--puts", type=int, default=1000, help="sequential puts (txn puts: 10x)")
    parser.add_argument("--failovers", type=int, default=3, help="election failovers to time")
    args = parser.parse_args()
    with etcd_url(args.url) as (url, where):
        result = asyncio.run(run(url, args.puts, args.failovers))
    print(json.dumps({"etcd": where, **result}, indent=2))


if __name__ == "__main__":
    main()
