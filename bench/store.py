"""Store throughput and watch latency; prints JSON. Not a test: numbers depend on the machine.

    .venv/bin/python bench/store.py [--backend sqlite|memory] [--data-dir DIR] [--puts N]

Measures, on a fresh store: sequential single puts (rate and latency), puts inside 128-op txns,
concurrent single puts (64 in flight), compare-and-swap updates of one key, watch latency (from just
before a put to the watcher receiving its event), and the codec's encode/decode time for a
replica-sized record.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from loadmaster.store.codec import decode, encode
from loadmaster.store.interface import MAX_TXN_OPS, Put
from loadmaster.store.memory import MemoryStore
from loadmaster.store.sqlite import SqliteStore

RECORD: dict[str, Any] = {
    "name": "shop-api-3",
    "deployment": "shop-api",
    "spec": {"cpu": 500, "memory": 536870912, "gpu": 0, "labels": {"app": "shop", "tier": "web"}},
    "status": {"node": "node-0042", "phase": "Running", "since": 1763758982.5, "reason": None},
}
VALUE = encode(RECORD)
IN_FLIGHT = 64


@asynccontextmanager
async def open_store(backend: str, data_dir: Path) -> AsyncIterator[MemoryStore | SqliteStore]:
    store: MemoryStore | SqliteStore = MemoryStore() if backend == "memory" else SqliteStore.open(data_dir)
    try:
        yield store
    finally:
        await store.close()


async def rate(count: int, body: Callable[[], Awaitable[None]]) -> float:
    started = time.perf_counter()
    await body()
    return round(count / (time.perf_counter() - started))


def percentiles(seconds: list[float]) -> dict[str, float]:
    micros = sorted(value * 1e6 for value in seconds)
    return {
        "p50": round(statistics.median(micros), 1),
        "p99": round(micros[max(0, int(len(micros) * 0.99) - 1)], 1),
        "max": round(micros[-1], 1),
    }


async def measure(store: MemoryStore | SqliteStore, puts: int) -> dict[str, Any]:
    put_latencies: list[float] = []

    async def single() -> None:
        for i in range(puts):
            started = time.perf_counter()
            await store.put(f"/bench/single/{i}", VALUE)
            put_latencies.append(time.perf_counter() - started)

    txns = max(1, puts // MAX_TXN_OPS) * 4

    async def batched() -> None:
        for t in range(txns):
            await store.txn([Put(f"/bench/txn/{t}/{i}", VALUE) for i in range(MAX_TXN_OPS)])

    async def concurrent() -> None:
        for start in range(0, puts, IN_FLIGHT):
            await asyncio.gather(*(store.put(f"/bench/conc/{start + i}", VALUE) for i in range(IN_FLIGHT)))

    async def cas() -> None:
        revision = await store.put("/bench/cas", VALUE, expect_revision=0)
        for _ in range(puts):
            revision = await store.put("/bench/cas", VALUE, expect_revision=revision)

    return {
        "single_puts_per_s": await rate(puts, single),
        "put_latency_us": percentiles(put_latencies),
        "txn128_puts_per_s": await rate(txns * MAX_TXN_OPS, batched),
        f"concurrent{IN_FLIGHT}_puts_per_s": await rate(puts // IN_FLIGHT * IN_FLIGHT, concurrent),
        "cas_updates_per_s": await rate(puts, cas),
        "watch_latency_us": await watch_latency(store, min(puts, 2000)),
    }


async def watch_latency(store: MemoryStore | SqliteStore, count: int) -> dict[str, float]:
    """Time from just before each put until the watcher holds its event (one put at a time)."""
    start = await store.revision() + 1
    sent: dict[int, float] = {}
    latencies: list[float] = []
    received = asyncio.Event()

    async def watcher() -> None:
        async for event in store.watch("/bench/watch/", start):
            latencies.append(time.perf_counter() - sent[int(event.key.rsplit("/", 1)[1])])
            received.set()

    task = asyncio.create_task(watcher())
    await asyncio.sleep(0)
    for i in range(count):
        received.clear()
        sent[i] = time.perf_counter()
        await store.put(f"/bench/watch/{i}", VALUE)
        await received.wait()
    task.cancel()
    return percentiles(latencies)


def codec_timing() -> dict[str, float]:
    rounds = 100_000
    started = time.perf_counter()
    for _ in range(rounds):
        encode(RECORD)
    encoded = time.perf_counter()
    for _ in range(rounds):
        decode(VALUE)
    decoded = time.perf_counter()
    return {
        "record_bytes": len(VALUE),
        "encode_us": round((encoded - started) / rounds * 1e6, 2),
        "decode_us": round((decoded - encoded) / rounds * 1e6, 2),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "memory"], default="sqlite")
    parser.add_argument("--data-dir", type=Path, help="default: a fresh temporary directory")
    parser.add_argument("--puts", type=int, default=5_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        async with open_store(args.backend, args.data_dir or Path(scratch)) as store:
            figures = await measure(store, args.puts)
    result = {"backend": args.backend, "puts": args.puts, "value_bytes": len(VALUE), **figures}
    print(json.dumps({**result, "codec": codec_timing()}, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
