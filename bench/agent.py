"""One real node agent running N sleep replicas (issue 17's figure); prints JSON.

    .venv/bin/python bench/agent.py [--replicas 200] [--steady-s 20]

Starts ``loadmaster server`` (SQLite, a free 127.0.0.1 port, a fresh data dir) and one
``loadmaster agent --name bench-01`` with its own work dir, applies one Deployment of ``--replicas``
``sleep`` replicas, and measures:

1. **apply -> all Running**: seconds from the apply request to every replica reported Running with a pid
   (and, first seen by the same polling: to every replica placed on the node, the scheduler's share;
   to every process started, the agent's starts; the rest is the status reports).
2. **agent CPU at steady state**: the agent process's CPU time (psutil, user + system) over
   ``--steady-s`` seconds once all are Running and healthy (10 s up without a healthcheck), as a
   percentage of one core.
3. the agent's RSS, and that every reported pid is alive (no duplicates: one process per replica).
4. **delete -> all stopped**: seconds from deleting the Deployment to every process gone.

Not a test: the numbers depend on the machine (2 shared cores when measured for the report).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).parent))
from control_plane import free_port, start_server, wait_ready

DEPLOYMENT = """\
api_version: loadmaster/v1
kind: Deployment
metadata: {{name: sleepers}}
spec:
  services:
    - {{name: s, command: [sleep, "3600"], replicas: {replicas}, resources: {{cpu: 10m, memory: 16Mi}},
       stop_grace_period: 2s}}
"""


def start_agent(url: str, token: str, work_dir: Path) -> subprocess.Popen[bytes]:
    args = ["agent", "--name", "bench-01", "--work-dir", str(work_dir), "--server", url, "--token", token]
    args += ["--capacity", "cpu=64,memory=256Gi", "--heartbeat", "10s", "--status-interval", "10s"]
    command = [sys.executable, "-c", "from loadmaster.cli.main import main; main()", *args]
    log = (work_dir.parent / "agent.log").open("ab")
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)


def processes_under(root: str) -> list[int]:
    """The live processes whose cwd is under ``root`` (the agent's replicas)."""
    found = []
    for process in psutil.process_iter(["cwd", "status"]):
        if (process.info.get("cwd") or "").startswith(root) and process.info.get("status") != "zombie":
            found.append(process.pid)
    return found


async def replicas(client: httpx.AsyncClient) -> list[dict]:
    return list((await client.get("/api/replicas")).raise_for_status().json()["items"])


async def wait_until(check, timeout_s: float, interval_s: float = 0.1) -> float:
    begun = time.monotonic()
    while not await check():
        if time.monotonic() - begun > timeout_s:
            raise TimeoutError
        await asyncio.sleep(interval_s)
    return time.monotonic() - begun


async def measure(count: int, steady_s: float, root: Path) -> dict:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start_server(root / "data", port, "sqlite", None)
    agent = None
    try:
        token = await wait_ready(url, root / "data", server)
        (root / "work").mkdir()
        agent = start_agent(url, token, root / "work")
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60.0) as client:

            async def registered() -> bool:
                return (await client.get("/api/nodes/bench-01")).status_code == 200

            await wait_until(registered, 60)
            applied_at = time.monotonic()
            body = DEPLOYMENT.format(replicas=count)
            response = await client.post(
                "/api/apply", content=body, headers={"Content-Type": "application/yaml"}
            )
            response.raise_for_status()

            placed_at: list[float] = []
            started_at: list[float] = []
            work = str(root / "work")

            async def all_running() -> bool:
                items = await replicas(client)
                if not placed_at and sum(1 for i in items if i["status"].get("node_ref")) == count:
                    placed_at.append(time.monotonic() - applied_at)
                if not started_at and len(processes_under(work)) == count:
                    started_at.append(time.monotonic() - applied_at)
                running = [
                    i for i in items if i["status"].get("phase") == "Running" and i["status"].get("pid")
                ]
                return len(running) == count

            await wait_until(all_running, 600, 0.2)
            to_running = time.monotonic() - applied_at
            pids = {item["status"]["pid"] for item in await replicas(client)}
            alive = sum(1 for pid in pids if psutil.pid_exists(pid))

            async def all_healthy() -> bool:  # without a healthcheck: once up --healthy-after (10 s)
                return sum(1 for i in await replicas(client) if i["status"].get("healthy") is True) == count

            await wait_until(all_healthy, 600, 0.2)
            to_healthy = time.monotonic() - applied_at
            await asyncio.sleep(2.0)  # let the last reports and watch events settle
            process = psutil.Process(agent.pid)
            before = process.cpu_times()
            await asyncio.sleep(steady_s)
            after = process.cpu_times()
            busy = (after.user - before.user) + (after.system - before.system)
            rss = process.memory_info().rss
            deleted_at = time.monotonic()
            (await client.delete("/api/deployments/sleepers")).raise_for_status()

            async def all_stopped() -> bool:
                return not any(
                    psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie" for pid in pids
                )

            await wait_until(all_stopped, 600, 0.2)
            to_stopped = time.monotonic() - deleted_at
        return {
            "replicas": count,
            "apply_to_all_placed_s": round(placed_at[0], 2) if placed_at else None,
            "apply_to_all_started_s": round(started_at[0], 2) if started_at else None,
            "apply_to_all_running_s": round(to_running, 2),
            "apply_to_all_healthy_s": round(to_healthy, 2),
            "distinct_pids": len(pids),
            "pids_alive": alive,
            "agent_cpu_steady_percent_of_one_core": round(100 * busy / steady_s, 2),
            "steady_window_s": steady_s,
            "agent_rss_mb": round(rss / 2**20, 1),
            "delete_to_all_stopped_s": round(to_stopped, 2),
            "cpus": psutil.cpu_count(),
        }
    finally:
        for process in (agent, server):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=200)
    parser.add_argument("--steady-s", type=float, default=20.0)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lm-bench-agent-") as tmp:
        print(json.dumps(asyncio.run(measure(options.replicas, options.steady_s, Path(tmp))), indent=2))


if __name__ == "__main__":
    main()
