"""The control plane end to end over real HTTP: apply -> Scheduled latency and bulk placement; prints JSON.

    .venv/bin/python bench/control_plane.py [--nodes 1000] [--replicas 10000] [--store sqlite]

Starts ``loadmaster server`` (a subprocess on a free 127.0.0.1 port, a fresh data dir), registers
``--nodes`` nodes through the API (and heartbeats them), and follows ``GET /api/watch?kinds=replicas``:
a replica counts as placed when its first event with phase Scheduled (or later, Running) arrives, which
is after the store persisted it. Then, on the same cluster:

1. **max sustained apply rate**: 16 clients apply one-task Jobs back to back for ``--probe-s``; the rate
   is the replicas placed per second over the time it took to place all of them.
2. **apply -> Scheduled latency** at half that rate (open loop: each apply is sent on schedule whether or
   not the previous ones are done), p50/p99 over ``--latency-s``.
3. **bulk**: one Deployment with ``--replicas`` replicas, from the apply request to the last replica placed.

``--store`` is passed to ``loadmaster server --store``: ``sqlite`` (default) gives the SQLite row of the
results; the etcd row comes from ``--store etcd://host:port,...`` once the HA work lands. Not a test:
the numbers depend on the machine (2 shared cores when measured for the report).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx

from loadmaster.agent.sse import EventDecoder

PLACED = frozenset({"Scheduled", "Running"})
CLIENTS = 16
TINY = {"cpu": "10m", "memory": "16Mi"}  # so that every benchmark replica fits many times over
NODE_CAPACITY = {"cpu": "64", "memory": "256Gi"}
HEARTBEAT_S = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(data_dir: Path, port: int, store: str) -> subprocess.Popen[bytes]:
    args = ["server", "--data-dir", str(data_dir), "--listen", f"127.0.0.1:{port}"]
    if store != "sqlite":
        args += ["--store", store]
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
        self.changed = asyncio.Event()

    async def run(self) -> None:
        params = {"kinds": "replicas", "from_revision": "0"}
        async with self.client.stream("GET", "/api/watch", params=params, timeout=None) as response:
            response.raise_for_status()
            decoder = EventDecoder()
            async for line in response.aiter_lines():
                event = decoder.feed(line)
                if event is None or event.event != "put":
                    continue
                data = event.json()
                phase = ((data.get("object") or {}).get("status") or {}).get("phase")
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


async def latency_at(
    client: httpx.AsyncClient, watch: PlacementWatch, rate: float, seconds: float
) -> dict[str, Any]:
    """Open loop at ``rate`` applies/s: each apply leaves on schedule; latency = placed event - send time."""
    count = max(1, int(rate * seconds))
    sent_at: dict[str, float] = {}
    started = time.perf_counter()
    tasks = []
    for index in range(count):
        await asyncio.sleep(max(0.0, started + index / rate - time.perf_counter()))
        name = f"lat-{index}"
        sent_at[f"{name}-0"] = time.perf_counter()
        tasks.append(asyncio.create_task(apply(client, job(name))))
    await asyncio.gather(*tasks)
    await watch.wait_all(sent_at, timeout_s=120)
    millis = sorted((watch.placed_at[name] - sent) * 1000 for name, sent in sent_at.items())
    return {
        "rate_per_s": round(rate, 1),
        "applies": count,
        "p50_ms": round(statistics.median(millis), 1),
        "p99_ms": round(millis[max(0, int(len(millis) * 0.99) - 1)], 1),
        "max_ms": round(millis[-1], 1),
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


async def run(args: argparse.Namespace, data_dir: Path) -> dict[str, Any]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start_server(data_dir, port, args.store)
    try:
        token = await wait_ready(url, data_dir, server)
        limits = httpx.Limits(max_connections=CLIENTS + 4)
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60.0, limits=limits) as client:
            started = time.perf_counter()
            names = await register_nodes(client, args.nodes)
            registered_s = time.perf_counter() - started
            beating = asyncio.create_task(heartbeats(client, names))
            watch = PlacementWatch(client)
            watching = asyncio.create_task(watch.run())
            await asyncio.sleep(0.5)  # the stream is open before the first apply
            probe = await max_sustained_rate(client, watch, args.probe_s)
            rate = args.latency_rate or probe["per_s"] / 2
            latency = await latency_at(client, watch, rate, args.latency_s)
            bulk_result = await bulk(client, watch, args.replicas)
            for task in (beating, watching):
                task.cancel()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    return {
        "store": args.store,
        "nodes": args.nodes,
        "register_nodes_s": round(registered_s, 2),
        "max_sustained_apply": probe,
        "apply_to_scheduled": {"rate_is": "given" if args.latency_rate else "half_of_max", **latency},
        "bulk": bulk_result,
    }


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
    parser.add_argument("--store", default="sqlite", help="sqlite (default), or what `server --store` takes")
    parser.add_argument("--data-dir", type=Path, default=None, help="default: a fresh temporary dir")
    args = parser.parse_args()
    if args.data_dir is not None:
        args.data_dir.mkdir(parents=True, exist_ok=True)
        if any(args.data_dir.iterdir()):
            # Objects left from an earlier run would make these applies "unchanged": nothing to time.
            raise SystemExit(f"--data-dir {args.data_dir} is not empty; give a fresh one")
        row = asyncio.run(run(args, args.data_dir))
    else:
        with tempfile.TemporaryDirectory(prefix="loadmaster-bench-") as tmp:
            row = asyncio.run(run(args, Path(tmp)))
    print(json.dumps({"results": [row]}, indent=2))


if __name__ == "__main__":
    main()
