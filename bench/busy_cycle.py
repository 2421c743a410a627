"""Read and apply latency while the scheduler is busy with a big cycle (issue 12); prints JSON.

    .venv/bin/python bench/busy_cycle.py [--nodes 5000] [--pending 10000] [--rate 200] [--seconds 30]

Starts ``loadmaster server`` (SQLite, a free 127.0.0.1 port, a fresh data dir), registers ``--nodes``
nodes through the API (4 cpu each; each heartbeats once a minute, spread evenly) and applies
``--pending`` replicas, in Deployments of 1,000, that cannot fit any node (8 cpu each, memory varied
per Deployment so that the cycle has several classes of task to filter): every full cycle attempts
them all, and places none. Then, for ``--seconds``:

- the scheduler is kept cycling: an admin ``trigger-reconcile`` (which cuts every backoff short, so all
  the pending replicas are attempted) as soon as the previous cycle ended (``/api/admin/stats``);
- an open-loop client sends ``--rate`` requests a second on schedule, over 32 kept-alive connections
  written by hand (each request is due at its time whether or not the earlier ones were answered;
  latency counts from that time): of every four, three reads
  (``GET /api/replicas/<a pending one>``, ``GET /api/deployments?selector=bench=unfit``, in turn) and
  one apply of a one-task Job (tiny: it is placed by the next cycle).

Reports p50/p99/max for reads and applies, and the cycles that ran (count, p50/max duration as the
server measured them), the CPU seconds the server process (its event loop and threads) and its decision
worker process used meanwhile, and the machine's load. Targets: read p99 <= 20 ms, apply p99 <= 50 ms.
``--decide-in thread`` runs the cycle's decide step in the server's process (the old way) to compare.
``--profile FILE`` profiles the server's main thread (the event loop: what holds it) with cProfile, for
the measured window only (SIGUSR1 starts it, SIGUSR2 writes FILE); ``FILE.stacks.json`` adds the
collector's pauses and the loop callbacks that held the loop 10 ms or more (with ``BENCH_SAMPLE_STACKS=1``,
where they were: opt-in, it can crash CPython 3.11), and ``BENCH_CPROFILE=0`` leaves cProfile out so that
those are measured at full speed (``profiled_server.py``). Not a test: the
numbers depend on the machine (2 shared cores when measured for the report; a load average above ~2
means other work took CPU from the server, so measure again on a quiet machine).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).parent))
from abuse import cpu_s
from control_plane import CLIENTS, free_port, wait_ready
from profiled_server import QUIET_LOAD, start_server_with

NODE_CAPACITY = {"cpu": "4", "memory": "16Gi"}
UNFITTING_CPU = "8"  # more than any node has: attempted by every cycle, placed by none
DEPLOYMENT_REPLICAS = 1000
READS_PER_APPLY = 3
CONNECTIONS = 32  # the open-loop client's kept-alive connections: 200/s at up to 160 ms each
SLICE_S = 5.0  # the p99 of every request (reads and applies) per slice of the window: when the tail came
HEARTBEAT_S = 60.0  # a third of the heartbeat window: 83 heartbeats a second at 5,000 nodes


def process_cpu_s(pid: int) -> dict[str, float]:
    """CPU seconds used so far by the server process and by each of its child processes (the decision
    worker, and multiprocessing's resource tracker, which uses next to none)."""
    used = {"server": cpu_s(pid), "decision_worker": 0.0}
    for child in psutil.Process(pid).children():
        with contextlib.suppress(psutil.NoSuchProcess, FileNotFoundError):
            used["decision_worker"] += cpu_s(child.pid)
    return used


def process_rss_mb(pid: int) -> dict[str, float]:
    """Resident memory of the server process and of its children (the decision worker), in MB."""
    rss = {"server": psutil.Process(pid).memory_info().rss / 2**20, "decision_worker": 0.0}
    for child in psutil.Process(pid).children():
        with contextlib.suppress(psutil.NoSuchProcess):
            rss["decision_worker"] += child.memory_info().rss / 2**20
    return {name: round(mb, 1) for name, mb in rss.items()}


async def register_nodes(client: httpx.AsyncClient, count: int) -> list[str]:
    names = [f"busy-{index:05d}" for index in range(count)]
    gate = asyncio.Semaphore(CLIENTS)

    async def register(name: str) -> None:
        async with gate:
            body = {"name": name, "capacity": NODE_CAPACITY, "network": {}}
            (await client.post("/api/nodes/register", json=body)).raise_for_status()

    await asyncio.gather(*(register(name) for name in names))
    return names


def deployment(index: int, replicas: int) -> dict[str, Any]:
    resources = {"cpu": UNFITTING_CPU, "memory": f"{1 + index % 8}Gi"}
    service = {"name": "s", "command": ["sleep", "infinity"], "replicas": replicas, "resources": resources}
    return {
        "api_version": "loadmaster/v1",
        "kind": "Deployment",
        "metadata": {"name": f"unfit-{index}", "labels": {"bench": "unfit"}},
        "spec": {"services": [service]},
    }


def small_job(name: str) -> dict[str, Any]:
    spec = {"tasks": 1, "command": ["true"], "resources": {"cpu": "10m", "memory": "16Mi"}}
    return {"api_version": "loadmaster/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


async def apply(client: httpx.AsyncClient, *objects: dict[str, Any]) -> None:
    response = await client.post("/api/apply", json={"items": list(objects)})
    if response.status_code != 200:
        raise SystemExit(f"apply refused ({response.status_code}): {response.text[:300]}")


async def scheduler_stats(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get("/api/admin/stats")
    response.raise_for_status()
    stats: dict[str, Any] = response.json()
    return stats


async def wait_pending(client: httpx.AsyncClient, count: int, timeout_s: float) -> None:
    deadline = time.perf_counter() + timeout_s
    while (await scheduler_stats(client))["pending_replicas"] < count:
        if time.perf_counter() > deadline:
            raise SystemExit(f"fewer than {count} replicas Pending after {timeout_s:g} s")
        await asyncio.sleep(0.5)


async def heartbeats(port: int, token: str, names: list[str]) -> None:
    """Each node heartbeats once every HEARTBEAT_S, spread evenly (open loop: ``len(names) /
    HEARTBEAT_S`` a second, as many agents would), so that all stay Ready in the 90 s window."""
    due: asyncio.Queue[bytes] = asyncio.Queue()

    async def work(connection: RawConnection) -> None:
        while True:
            await connection.exchange(await due.get())

    workers = [asyncio.create_task(work(await RawConnection.open(port))) for _ in range(8)]
    started = time.perf_counter()
    try:
        for number, name in enumerate(itertools.cycle(names)):
            await asyncio.sleep(max(0.0, started + number * HEARTBEAT_S / len(names) - time.perf_counter()))
            due.put_nowait(raw_request("POST", f"/api/nodes/{name}/heartbeat", token, b"{}"))
    finally:
        for worker in workers:
            worker.cancel()


async def keep_cycling(client: httpx.AsyncClient, durations_s: list[float]) -> None:
    """Trigger a full cycle whenever the previous one has ended; note how long each took."""
    cycles = (await scheduler_stats(client))["cycles"]
    while True:
        (await client.post("/api/admin/trigger-reconcile")).raise_for_status()
        while (stats := await scheduler_stats(client))["cycles"] == cycles:
            await asyncio.sleep(0.5)  # stats counts every replica: not too often
        cycles = stats["cycles"]
        durations_s.append(stats["last_cycle_duration_s"])


class RawConnection:
    """One kept-alive HTTP/1.1 connection, written and read by hand: httpx costs the client ~5 ms of CPU
    a request at this rate, which on 2 shared cores is the server's CPU too (and its latency)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int) -> RawConnection:
        return cls(*await asyncio.open_connection("127.0.0.1", port))

    async def exchange(self, request: bytes) -> int:
        """Send ``request``, read its whole answer (Content-Length framed); its status."""
        self.writer.write(request)
        status = int((await self.reader.readline()).split()[1])
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        await self.reader.readexactly(length)
        return status


def raw_request(method: str, path: str, token: str, body: bytes = b"") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nhost: bench\r\nauthorization: Bearer {token}\r\n"
    if body:
        head += f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body


async def open_loop(
    port: int, token: str, pending_name: str, rate: float, seconds: float
) -> dict[str, list[float]]:
    """``rate`` requests a second, each due at its time; CONNECTIONS kept-alive connections take them
    in order (a request waits for a free one: that wait is part of its latency)."""
    latencies: dict[str, list[float]] = {"read": [], "apply": []}
    by_slice: dict[int, list[float]] = {}  # every request's latency by the 5-s slice it was due in
    reads = itertools.cycle([f"/api/replicas/{pending_name}", "/api/deployments?selector=bench%3Dunfit"])
    due: asyncio.Queue[tuple[str, float, bytes] | None] = asyncio.Queue()

    async def work(connection: RawConnection) -> None:
        while (item := await due.get()) is not None:
            kind, at, request = item
            status = await connection.exchange(request)
            if status != 200:
                raise SystemExit(f"{kind} answered {status}")
            latencies[kind].append((time.perf_counter() - at) * 1000)
            by_slice.setdefault(int((at - started) // SLICE_S), []).append(latencies[kind][-1])
        connection.writer.close()

    connections = [await RawConnection.open(port) for _ in range(CONNECTIONS)]
    workers = [asyncio.create_task(work(connection)) for connection in connections]
    started = time.perf_counter()
    for number in range(int(rate * seconds)):
        at = started + number / rate
        await asyncio.sleep(max(0.0, at - time.perf_counter()))
        if number % (READS_PER_APPLY + 1) == READS_PER_APPLY:
            body = json.dumps({"items": [small_job(f"busy-job-{number}")]}).encode()
            due.put_nowait(("apply", at, raw_request("POST", "/api/apply", token, body)))
        else:
            due.put_nowait(("read", at, raw_request("GET", next(reads), token)))
    for _ in workers:
        due.put_nowait(None)
    await asyncio.gather(*workers)
    latencies["p99_by_slice"] = [percentiles(by_slice[index])["p99_ms"] for index in sorted(by_slice)]
    return latencies


def percentiles(millis: list[float]) -> dict[str, float]:
    ordered = sorted(millis)
    return {
        "count": len(ordered),
        "p50_ms": round(statistics.median(ordered), 1),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 1),
        "max_ms": round(ordered[-1], 1),
    }


async def run(args: argparse.Namespace, data_dir: Path) -> dict[str, Any]:
    port = free_port()
    profile = Path(args.profile).resolve() if args.profile else None
    server = start_server_with(data_dir, port, args.decide_in, profile)
    try:
        token = await wait_ready(f"http://127.0.0.1:{port}", data_dir, server)
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=120.0,
            # Below the server's 5 s keep-alive: a connection it is closing is never reused (a ReadError).
            limits=httpx.Limits(max_connections=256, keepalive_expiry=2.0),
        ) as client:
            started = time.perf_counter()
            names = await register_nodes(client, args.nodes)
            registered_s = time.perf_counter() - started
            print(f"{len(names)} nodes registered in {registered_s:.0f} s", file=sys.stderr)
            beating = asyncio.create_task(heartbeats(port, token, names))
            full, rest = divmod(args.pending, DEPLOYMENT_REPLICAS)
            sizes = [DEPLOYMENT_REPLICAS] * full + ([rest] if rest else [])
            for index, size in enumerate(sizes):
                await apply(client, deployment(index, size))
            await wait_pending(client, args.pending, timeout_s=300)
            print(f"{args.pending} replicas pending; load for {args.seconds:g} s", file=sys.stderr)
            durations_s: list[float] = []
            cycling = asyncio.create_task(keep_cycling(client, durations_s))
            await asyncio.sleep(1)  # the first triggered cycle is under way
            if profile is not None:
                server.send_signal(signal.SIGUSR1)
            server_cpu, own_cpu = process_cpu_s(server.pid), cpu_s(os.getpid())
            load_before = os.getloadavg()[0]
            latencies = await open_loop(port, token, "unfit-0-s-0", args.rate, args.seconds)
            server_after = process_cpu_s(server.pid)
            rss = process_rss_mb(server.pid)
            own_cpu = cpu_s(os.getpid()) - own_cpu
            if profile is not None:
                server.send_signal(signal.SIGUSR2)
            for task in (cycling, beating):
                task.cancel()
            stats = await scheduler_stats(client)
        return {
            "nodes": args.nodes,
            "pending": stats["pending_replicas"],
            "register_nodes_s": round(registered_s, 1),
            "rate_per_s": args.rate,
            "seconds": args.seconds,
            "read": percentiles(latencies["read"]),
            "apply": percentiles(latencies["apply"]),
            f"p99_ms_by_{SLICE_S:g}s": latencies["p99_by_slice"],
            "cycles": {
                "count": len(durations_s),
                "p50_s": round(statistics.median(durations_s), 2) if durations_s else None,
                "max_s": round(max(durations_s), 2) if durations_s else None,
            },
            "decide_in": args.decide_in,
            "rss_mb": rss,
            # CPU seconds used while the load ran: which side was short of CPU, if either. "server" is
            # the server process (event loop and its threads); "decision_worker" the cycle's process.
            "cpu_s": {
                **{name: round(server_after[name] - server_cpu[name], 1) for name in server_after},
                "client": round(own_cpu, 1),
            },
            # the machine's, shared with other work: above ~2 on 2 cores, others took CPU from the server
            "load_average_1m": {"before": round(load_before, 1), "after": round(os.getloadavg()[0], 1)},
            # False: the figures are the shared machine's as much as the server's; measure again later
            "quiet_machine": max(load_before, os.getloadavg()[0]) <= QUIET_LOAD,
            "targets": {
                "read_p99_20ms": percentiles(latencies["read"])["p99_ms"] <= 20,
                "apply_p99_50ms": percentiles(latencies["apply"])["p99_ms"] <= 50,
            },
        }
    finally:
        server.terminate()
        server.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pending", type=int, default=10000)
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument(
        "--decide-in", choices=("process", "thread"), default="process", help="the server's --decide-in"
    )
    parser.add_argument("--profile", help="profile the server's event loop in the measured window into FILE")
    parser.add_argument(
        "--keep", help="the server's data dir (kept, with its server.log); default: a temp dir"
    )
    args = parser.parse_args()
    if args.keep:
        print(json.dumps(asyncio.run(run(args, Path(args.keep))), indent=2))
        return
    with tempfile.TemporaryDirectory(prefix="loadmaster-busy-") as tmp:
        print(json.dumps(asyncio.run(run(args, Path(tmp))), indent=2))


if __name__ == "__main__":
    main()
