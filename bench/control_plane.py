"""The control plane end to end over real HTTP: apply -> Scheduled latency and bulk placement; prints JSON.

    .venv/bin/python bench/control_plane.py [--nodes 1000] [--replicas 10000] [--store sqlite]
    .venv/bin/python bench/control_plane.py --store etcd [--standbys 1] [--lease-ttl 15]

Starts ``loadmaster server`` (a subprocess on a free 127.0.0.1 port, a fresh data dir), registers
``--nodes`` nodes through the API (and heartbeats them), and follows ``GET /api/watch?kinds=replicas``:
a replica counts as placed when its first event with phase Scheduled (or later, Running) arrives, which
is after the store persisted it. Then, on the same cluster:

1. **max sustained apply rate**: 16 clients apply one-task Jobs back to back for ``--probe-s``; the rate
   is the replicas placed per second over the time it took to place all of them.
2. **apply -> Scheduled latency** at half that rate (open loop: each apply is sent on schedule whether or
   not the previous ones are done), p50/p99 over ``--latency-s``. The harness freezes its own heap first,
   so that its garbage collector's pauses are not counted as the server's latency.
3. **bulk**: one Deployment with ``--replicas`` replicas, from the apply request to the last replica placed.

``--store`` is passed to ``loadmaster server --store``: ``sqlite`` (default) gives the SQLite row of the
results. ``--store etcd`` starts a one-member etcd (Debian's, on free 127.0.0.1 ports, removed after)
and ``--store etcd://host:port,...`` uses a running one; the etcd row runs HA as deployed: ``--standbys``
more servers (default 1) join the same etcd, each with its own data dir, and after the steps above:

4. **failover**: ``kill -9`` the leader; the time until a standby says it leads (``--lease-ttl``,
   default the server's 15 s, bounds it), and until a Job applied right after the kill is Scheduled.

Each row ends with ``targets``: p99 <= 50 ms (SQLite) / 100 ms (etcd) at half the maximum rate, the bulk
Deployment Scheduled within 3 s (SQLite) / 5 s (etcd), failover within TTL + 2 s. ``apply_acknowledged``
is the apply request's own latency, the first part of apply -> Scheduled. Not a test: the numbers
depend on the machine (2 shared cores when measured for the report).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from httpx_sse import EventSource

from loadmaster.runtime.plane.leadership.leader_etcd import DEFAULT_TTL_S
from loadmaster.testing.etcd_cluster import EtcdCluster

PLACED = frozenset({"Scheduled", "Running"})
CLIENTS = 16
TINY = {"cpu": "10m", "memory": "16Mi"}  # so that every benchmark replica fits many times over
NODE_CAPACITY = {"cpu": "64", "memory": "256Gi"}
HEARTBEAT_S = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(data_dir: Path, port: int, store: str, lease_ttl_s: int | None) -> subprocess.Popen[bytes]:
    data_dir.mkdir(parents=True, exist_ok=True)
    args = ["server", "--data-dir", str(data_dir), "--listen", f"127.0.0.1:{port}"]
    if store != "sqlite":
        args += ["--store", store]
    if lease_ttl_s is not None:
        args += ["--lease-ttl", str(lease_ttl_s)]
    command = [sys.executable, "-c", "from loadmaster.cli.main import main; main()", *args]
    log = (data_dir / "server.log").open("ab")
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)


async def wait_ready(url: str, data_dir: Path, server: subprocess.Popen[bytes]) -> str:
    async with httpx.AsyncClient(timeout=2.0) as client:
        for _ in range(600):
            if server.poll() is not None:
                raise SystemExit(f"the server exited: see {data_dir / 'server.log'}")
            try:
                ready = (await client.get(f"{url}/api/ready")).status_code == 200
            except httpx.TransportError:
                ready = False
            if ready and (data_dir / "admin-token").exists():
                return (data_dir / "admin-token").read_text().strip()
            await asyncio.sleep(0.05)
    raise SystemExit("the server did not become ready in 30 s")


class PlacementWatch:
    """The moment each replica was first seen placed, from the watch stream."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self.placed_at: dict[str, float] = {}
        self.created_at: dict[str, float] = {}  # first event of the replica (created Pending)
        self.changed = asyncio.Event()

    async def run(self) -> None:
        params = {"kinds": "replicas", "from_revision": "0"}
        async with self.client.stream("GET", "/api/watch", params=params, timeout=None) as response:
            response.raise_for_status()
            async for event in EventSource(response).aiter_sse():
                if event.event != "put":
                    continue
                data = event.json()
                phase = ((data.get("object") or {}).get("status") or {}).get("phase")
                self.created_at.setdefault(data["name"], time.perf_counter())
                if phase in PLACED and data["name"] not in self.placed_at:
                    self.placed_at[data["name"]] = time.perf_counter()
                    self.changed.set()

    async def wait_all(self, names: Iterable[str], timeout_s: float) -> None:
        wanted = set(names)
        deadline = time.perf_counter() + timeout_s
        while not wanted <= self.placed_at.keys():
            self.changed.clear()
            left = deadline - time.perf_counter()
            if left <= 0:
                missing = len(wanted - self.placed_at.keys())
                raise SystemExit(f"{missing} replicas not placed after {timeout_s:g}s")
            try:
                await asyncio.wait_for(self.changed.wait(), timeout=left)
            except TimeoutError:
                continue


def job(name: str) -> dict[str, Any]:
    spec = {"tasks": 1, "command": ["true"], "resources": TINY}
    return {"api_version": "loadmaster/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


async def apply(client: httpx.AsyncClient, *objects: dict[str, Any]) -> None:
    response = await client.post("/api/apply", json={"items": list(objects)})
    if response.status_code != 200:
        raise SystemExit(f"apply refused ({response.status_code}): {response.text[:300]}")


async def register_nodes(client: httpx.AsyncClient, count: int) -> list[str]:
    names = [f"bench-{index:04d}" for index in range(count)]
    gate = asyncio.Semaphore(CLIENTS)

    async def register(name: str) -> None:
        async with gate:
            body = {
                "name": name,
                "labels": {},
                "capacity": NODE_CAPACITY,
                "system_reserved": {},
                "taints": [],
            }
            (await client.post("/api/nodes/register", json={**body, "network": {}})).raise_for_status()

    await asyncio.gather(*(register(name) for name in names))
    return names


async def heartbeats(client: httpx.AsyncClient, names: list[str]) -> None:
    """Keep the nodes Ready for a benchmark longer than the 90 s heartbeat window."""
    while True:
        await asyncio.sleep(HEARTBEAT_S)
        for start in range(0, len(names), CLIENTS):
            batch = names[start : start + CLIENTS]
            await asyncio.gather(*(client.post(f"/api/nodes/{name}/heartbeat", json={}) for name in batch))


async def max_sustained_rate(
    client: httpx.AsyncClient, watch: PlacementWatch, seconds: float
) -> dict[str, Any]:
    """Closed loop, CLIENTS at a time: replicas placed per second while applies never stop coming."""
    sent: list[str] = []
    started = time.perf_counter()
    stop_at = started + seconds

    async def flood(worker: int) -> None:
        index = 0
        while time.perf_counter() < stop_at:
            name = f"probe-{worker}-{index}"
            sent.append(f"{name}-0")
            await apply(client, job(name))
            index += 1

    await asyncio.gather(*(flood(worker) for worker in range(CLIENTS)))
    await watch.wait_all(sent, timeout_s=120)
    last = max(watch.placed_at[name] for name in sent)
    return {"applies": len(sent), "per_s": round(len(sent) / (last - started), 1)}


def freeze_harness_heap() -> None:
    """Keep this process's full GC passes out of the timed window: the watch's maps hold every replica
    seen, and a 30-40 ms pause here would be counted as the server's latency. The server freezes its
    own heap (``runtime/plane/process/heap.py``); this does the same for the harness, once, before timing."""
    gc.collect()
    gc.freeze()


async def latency_at(
    client: httpx.AsyncClient, watch: PlacementWatch, rate: float, seconds: float
) -> dict[str, Any]:
    """Open loop at ``rate`` applies/s: each apply leaves on schedule; latency = placed event - send time."""
    count = max(1, int(rate * seconds))
    sent_at: dict[str, float] = {}
    acknowledged_ms: list[float] = []

    async def timed_apply(name: str) -> None:
        await apply(client, job(name))
        acknowledged_ms.append((time.perf_counter() - sent_at[f"{name}-0"]) * 1000)

    started = time.perf_counter()
    tasks = []
    for index in range(count):
        await asyncio.sleep(max(0.0, started + index / rate - time.perf_counter()))
        name = f"lat-{index}"
        sent_at[f"{name}-0"] = time.perf_counter()
        tasks.append(asyncio.create_task(timed_apply(name)))
    await asyncio.gather(*tasks)
    await watch.wait_all(sent_at, timeout_s=120)
    millis = [(watch.placed_at[name] - sent) * 1000 for name, sent in sent_at.items()]
    return {
        "rate_per_s": round(rate, 1),
        "applies": count,
        **percentiles(millis),
        "apply_acknowledged": percentiles(acknowledged_ms),
        # where the time goes, as the watch shows it: apply -> replica created (controller pass), then
        # replica created -> placed (scheduler cycle and its write)
        "apply_to_replica_created": percentiles(
            [(watch.created_at[name] - sent) * 1000 for name, sent in sent_at.items()]
        ),
        "replica_created_to_placed": percentiles(
            [(watch.placed_at[name] - watch.created_at[name]) * 1000 for name in sent_at]
        ),
    }


def percentiles(millis: list[float]) -> dict[str, float]:
    ordered = sorted(millis)
    return {
        "p50_ms": round(statistics.median(ordered), 1),
        "p99_ms": round(ordered[max(0, int(len(ordered) * 0.99) - 1)], 1),
        "max_ms": round(ordered[-1], 1),
    }


async def bulk(client: httpx.AsyncClient, watch: PlacementWatch, replicas: int) -> dict[str, Any]:
    service = {"name": "s", "command": ["sleep", "infinity"], "replicas": replicas, "resources": TINY}
    deployment = {
        "api_version": "loadmaster/v1",
        "kind": "Deployment",
        "metadata": {"name": "bulk"},
        "spec": {"services": [service]},
    }
    started = time.perf_counter()
    await apply(client, deployment)
    applied = time.perf_counter()
    await watch.wait_all((f"bulk-s-{index}" for index in range(replicas)), timeout_s=300)
    done = max(watch.placed_at[f"bulk-s-{index}"] for index in range(replicas))
    return {
        "replicas": replicas,
        "apply_request_s": round(applied - started, 3),
        "apply_to_all_scheduled_s": round(done - started, 3),
    }


@dataclass
class Server:
    popen: subprocess.Popen[bytes]
    url: str
    data_dir: Path


def launch(data_dir: Path, store: str, lease_ttl_s: int | None) -> Server:
    port = free_port()
    return Server(start_server(data_dir, port, store, lease_ttl_s), f"http://127.0.0.1:{port}", data_dir)


async def leader_status(client: httpx.AsyncClient, server: Server) -> dict[str, Any] | None:
    try:
        return dict((await client.get(f"{server.url}/api/admin/leader-status")).raise_for_status().json())
    except httpx.HTTPError:
        return None  # killed or not answering: ask the others


async def first_leader(client: httpx.AsyncClient, servers: list[Server], timeout_s: float) -> Server:
    deadline = time.perf_counter() + timeout_s
    while time.perf_counter() < deadline:
        for server in servers:
            status = await leader_status(client, server)
            if status is not None and status["is_leader"]:
                return server
        await asyncio.sleep(0.01)
    raise SystemExit(f"no server led within {timeout_s:g}s")


async def scheduled_after_failover(client: httpx.AsyncClient, standbys: list[Server]) -> None:
    """Apply a Job as a client would right after the kill (retrying until a standby leads), then wait
    until its replica is Scheduled."""
    body = {"items": [job("after-failover")]}
    accepted: Server | None = None
    while accepted is None:
        for server in standbys:
            with contextlib.suppress(httpx.TransportError):  # a standby still starting to lead
                if (await client.post(f"{server.url}/api/apply", json=body)).status_code == 200:
                    accepted = server
                    break
        await asyncio.sleep(0.01)
    while True:
        response = await client.get(f"{accepted.url}/api/replicas/after-failover-0")
        if response.status_code == 200 and response.json().get("status", {}).get("phase") in PLACED:
            return
        await asyncio.sleep(0.01)


async def failover(servers: list[Server], token: str, lease_ttl_s: int) -> dict[str, Any]:
    """kill -9 the leader: seconds until a standby leads, and until a Job applied then is Scheduled."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(headers=headers, timeout=5.0) as client:
        leader = await first_leader(client, servers, 10)
        standbys = [server for server in servers if server is not leader]
        leader.popen.kill()
        leader.popen.wait()
        killed = time.perf_counter()
        give_up_s = lease_ttl_s + 30
        await first_leader(client, standbys, give_up_s)
        leads_s = time.perf_counter() - killed
        await asyncio.wait_for(scheduled_after_failover(client, standbys), give_up_s)
        scheduled_s = time.perf_counter() - killed
    return {
        "lease_ttl_s": lease_ttl_s,
        "standbys": len(standbys),
        "standby_leads_after_s": round(leads_s, 3),
        "apply_scheduled_after_kill_s": round(scheduled_s, 3),
    }


# The issues' targets per store: SQLite (the control plane issue) and etcd (the HA issue).
TARGETS = {"sqlite": {"p99_ms": 50.0, "bulk_s": 3.0}, "etcd": {"p99_ms": 100.0, "bulk_s": 5.0}}


def targets(row: dict[str, Any]) -> dict[str, bool]:
    """The issue's targets, met or not (p99 counts only at half the maximum rate)."""
    wanted = TARGETS["etcd" if row["store"].startswith("etcd") else "sqlite"]
    bulk_s, p99_ms = wanted["bulk_s"], wanted["p99_ms"]
    met = {f"bulk_scheduled_within_{bulk_s:g}s": row["bulk"]["apply_to_all_scheduled_s"] <= bulk_s}
    if row["apply_to_scheduled"]["rate_is"] == "half_of_max":
        met[f"p99_within_{p99_ms:g}ms_at_half_max_rate"] = row["apply_to_scheduled"]["p99_ms"] <= p99_ms
    if "failover" in row:
        met["failover_within_ttl_plus_2s"] = (
            row["failover"]["standby_leads_after_s"] <= row["failover"]["lease_ttl_s"] + 2
        )
    return met


async def run(args: argparse.Namespace, data_dir: Path, store: str) -> dict[str, Any]:
    ha = store.startswith("etcd://")
    lease_ttl_s = args.lease_ttl if ha else None
    primary = launch(data_dir, store, lease_ttl_s)
    servers = [primary]
    failover_row: dict[str, Any] | None = None
    try:
        token = await wait_ready(primary.url, data_dir, primary.popen)
        if ha:
            async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as client:
                await first_leader(client, [primary], 10)  # the standbys join behind a leader
            for index in range(1, args.standbys + 1):
                standby = launch(data_dir / f"standby-{index}", store, lease_ttl_s)
                servers.append(standby)
                await wait_ready(standby.url, standby.data_dir, standby.popen)
        limits = httpx.Limits(max_connections=CLIENTS + 4)
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(
            base_url=primary.url, headers=headers, timeout=60.0, limits=limits
        ) as client:
            started = time.perf_counter()
            names = await register_nodes(client, args.nodes)
            registered_s = time.perf_counter() - started
            beating = asyncio.create_task(heartbeats(client, names))
            watch = PlacementWatch(client)
            watching = asyncio.create_task(watch.run())
            await asyncio.sleep(0.5)  # the stream is open before the first apply
            probe = await max_sustained_rate(client, watch, args.probe_s)
            rate = args.latency_rate or probe["per_s"] / 2
            freeze_harness_heap()
            latency = await latency_at(client, watch, rate, args.latency_s)
            bulk_result = await bulk(client, watch, args.replicas)
            for task in (beating, watching):
                task.cancel()
        if ha and args.standbys > 0:
            failover_row = await failover(servers, token, args.lease_ttl)
    finally:
        for server in servers:
            if server.popen.poll() is None:
                server.popen.send_signal(signal.SIGTERM)
                server.popen.wait(timeout=30)
    row: dict[str, Any] = {
        "store": args.store,
        "servers": len(servers),
        "nodes": args.nodes,
        "register_nodes_s": round(registered_s, 2),
        "max_sustained_apply": probe,
        "apply_to_scheduled": {"rate_is": "given" if args.latency_rate else "half_of_max", **latency},
        "bulk": bulk_result,
    }
    if failover_row is not None:
        row["failover"] = failover_row
    row["targets"] = targets(row)
    return row


def run_with_store(args: argparse.Namespace, data_dir: Path) -> dict[str, Any]:
    if args.store != "etcd":
        return asyncio.run(run(args, data_dir, args.store))
    # Started here, in the main thread: the members die with this process even if it is killed.
    with EtcdCluster(size=1) as etcd:
        return asyncio.run(run(args, data_dir, etcd.url))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--replicas", type=int, default=10_000)
    parser.add_argument("--probe-s", type=float, default=5.0, help="seconds of back-to-back applies")
    parser.add_argument("--latency-s", type=float, default=10.0, help="seconds of paced applies")
    parser.add_argument(
        "--latency-rate",
        type=float,
        default=None,
        help="applies/s for the latency run (default: half the max)",
    )
    parser.add_argument(
        "--store",
        default="sqlite",
        help="sqlite (default), etcd (a local one-member etcd), or etcd://h:p,...",
    )
    parser.add_argument("--standbys", type=int, default=1, help="etcd: servers standing by (default 1)")
    parser.add_argument("--lease-ttl", type=int, default=DEFAULT_TTL_S, help="etcd: the leader's lease TTL")
    parser.add_argument("--data-dir", type=Path, default=None, help="default: a fresh temporary dir")
    args = parser.parse_args()
    if args.data_dir is not None:
        args.data_dir.mkdir(parents=True, exist_ok=True)
        if any(args.data_dir.iterdir()):
            # Objects left from an earlier run would make these applies "unchanged": nothing to time.
            raise SystemExit(f"--data-dir {args.data_dir} is not empty; give a fresh one")
        row = run_with_store(args, args.data_dir)
    else:
        with tempfile.TemporaryDirectory(prefix="loadmaster-bench-") as tmp:
            row = run_with_store(args, Path(tmp))
    print(json.dumps({"results": [row]}, indent=2))


if __name__ == "__main__":
    main()
