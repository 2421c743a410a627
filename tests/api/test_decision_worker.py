"""The decide step in a worker process (``decide_in: process``): it places replicas like the in-process
step, a worker that dies is replaced and counted, and no worker outlives its server, however the server
stops (closed, SIGTERM, or killed outright)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import psutil
import pytest

from loadmaster.runtime.scheduling.deciding.decision_process import WorkerProcessDecider
from tests.api.conftest import Api, deployment, open_api
from tests.e2e.processes import Server, wait_for

pytestmark = pytest.mark.anyio

# Generous: a worker's first cycle starts a Python process (the engine's imports) on a busy machine.
PLACED_WAIT_S = 60.0
EXIT_WAIT_S = 30.0


def worker_of(api: Api) -> WorkerProcessDecider:
    decider = api.server.plane.decider
    assert isinstance(decider, WorkerProcessDecider)
    return decider


async def wait_scheduled(api: Api, names: set[str]) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PLACED_WAIT_S
    while True:
        phases = {name: obj["status"]["phase"] for name, obj in (await api.replicas()).items()}
        if all(phases.get(name) == "Scheduled" for name in names):
            return
        assert loop.time() < deadline, f"not all of {sorted(names)} Scheduled: {phases}"
        await asyncio.sleep(0.1)


def wait_gone(pid: int) -> None:
    """Until no process has ``pid`` (a zombie child counts as gone: it runs nothing)."""
    try:
        process = psutil.Process(pid)
        process.wait(timeout=EXIT_WAIT_S)
    except psutil.NoSuchProcess:
        return
    except psutil.TimeoutExpired:
        raise AssertionError(f"process {pid} still runs {EXIT_WAIT_S:g} s later") from None


def restarts_counted(metrics_text: str) -> float:
    for line in metrics_text.splitlines():
        if line.startswith("loadmaster_decision_worker_restarts_total "):
            return float(line.split()[1])
    raise AssertionError("loadmaster_decision_worker_restarts_total is not on /metrics")


async def test_a_server_deciding_in_a_worker_process_places_replicas_and_stops_the_worker_with_it(
    tmp_path: Path,
) -> None:
    async with open_api(tmp_path, decide_in="process") as api:
        await api.register("n1")
        assert (await api.apply(deployment("shop", replicas=2))).status_code == 200
        await wait_scheduled(api, {"shop-api-0", "shop-api-1"})
        pid = worker_of(api).pid
        assert pid is not None and pid != os.getpid()
        assert psutil.Process(pid).ppid() == os.getpid()
    wait_gone(pid)


async def test_a_killed_decision_worker_is_replaced_counted_and_scheduling_goes_on(tmp_path: Path) -> None:
    async with open_api(tmp_path, decide_in="process") as api:
        await api.register("n1")
        assert (await api.apply(deployment("first", replicas=1))).status_code == 200
        await wait_scheduled(api, {"first-api-0"})
        first = worker_of(api).pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        wait_gone(first)
        assert (await api.apply(deployment("second", replicas=1))).status_code == 200
        await wait_scheduled(api, {"second-api-0"})
        second = worker_of(api).pid
        assert second is not None and second != first
        metrics = await api.anonymous.get("/metrics")
        assert restarts_counted(metrics.text) == 1.0


@pytest.mark.parametrize(
    "stop", [pytest.param(signal.SIGTERM, id="sigterm"), pytest.param(signal.SIGKILL, id="sigkill")]
)
def test_no_decision_worker_outlives_a_loadmaster_server(tmp_path: Path, stop: signal.Signals) -> None:
    """A real ``loadmaster server``: stopped by SIGTERM it stops its worker; killed outright, its worker
    reads end of file on its pipe and exits by itself."""
    server = Server(tmp_path / "data").start()
    try:
        job = {
            "api_version": "loadmaster/v1",
            "kind": "Job",
            "metadata": {"name": "once"},
            "spec": {"tasks": 1, "command": ["true"], "resources": {"cpu": "10m", "memory": "16Mi"}},
        }
        with server.client() as client:
            node = {"name": "n1", "capacity": {"cpu": "1", "memory": "1Gi"}}
            assert client.post("/api/nodes/register", json=node).status_code == 200
            assert client.post("/api/apply", json={"items": [job]}).status_code == 200
        assert server.process is not None and server.process.popen is not None
        parent = psutil.Process(server.process.popen.pid)
        wait_for(lambda: _decision_worker(parent), "the server's decision worker", timeout_s=PLACED_WAIT_S)
        children = parent.children()  # the worker, and multiprocessing's resource tracker
        server.process.popen.send_signal(stop)
        server.process.popen.wait(timeout=EXIT_WAIT_S)
        for child in children:
            wait_gone(child.pid)
    finally:
        server.stop()


def _decision_worker(parent: psutil.Process) -> psutil.Process | None:
    workers = [child for child in parent.children() if "spawn_main" in " ".join(child.cmdline())]
    return workers[0] if workers else None
