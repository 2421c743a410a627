"""One loadmaster server on SQLite (run in this process by a background thread, so a test can write
what the leader's restart policy would write) and real node agents as subprocesses, each with its own
work dir, all on 127.0.0.1. Nothing outlives a test: every process whose cwd is under a work dir is
killed with its process group at teardown."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from loadmaster.api.serve import running_server
from loadmaster.manifests import REPLICA
from loadmaster.runtime.config import ServerConfig
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.requests.writes.object_update import update_object
from tests.e2e.processes import Process, loadmaster, wait_for

START_TIMEOUT_S = 30.0
# Generous bounds for a busy 2-core machine; the tests only wait up to them, never assert on them.
WAIT_S = 30.0


class SqliteServer:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.url = ""
        self.token = ""
        self.plane: ControlPlane | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="loadmaster-server", daemon=True)

    def start(self) -> SqliteServer:
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S) or self._failure is not None:
            raise AssertionError(f"the server did not start: {self._failure!r}")
        return self

    def close(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(START_TIMEOUT_S)

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:
            self._failure = exc
            self._ready.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        config = ServerConfig(data_dir=self.data_dir, listen="127.0.0.1:0", store="sqlite", debounce_s=0.005)
        async with running_server(config) as running:
            self.url, self.token, self.plane = running.url, running.admin_token, running.plane
            self._ready.set()
            await self._stop.wait()

    def client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=60.0
        )

    def update_replica(self, name: str, mutate: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:
        """Change a stored replica as a controller would (on the server's own loop)."""
        assert self._loop is not None and self.plane is not None
        future: Future[Any] = asyncio.run_coroutine_threadsafe(
            update_object(self.plane, REPLICA, name, mutate), self._loop
        )
        future.result(timeout=WAIT_S)

    def command(self, replica: str, command_id: int, kind: str) -> None:
        """Append a leader command (``restart`` | ``remove_from_routing``) to ``status.commands``."""

        def append(obj: dict[str, Any]) -> dict[str, Any]:
            status = dict(obj.get("status", {}))
            status["commands"] = [*status.get("commands", []), {"id": command_id, "type": kind}]
            return {**obj, "status": status}

        self.update_replica(replica, append)


@dataclass
class Agent:
    name: str
    work_dir: Path
    server: SqliteServer
    process: Process | None = None
    extra: list[str] = field(default_factory=list)
    token: str | None = None  # the server's admin token when None

    def start(self) -> Agent:
        args = loadmaster(
            "agent",
            "--name",
            self.name,
            "--work-dir",
            str(self.work_dir),
            "--capacity",
            "cpu=4,memory=8Gi",
            "--heartbeat",
            "1s",
            "--status-interval",
            "1s",
            "--healthy-after",
            "1s",
            "--server",
            self.server.url,
            "--token",
            self.token or self.server.token,
            *self.extra,
        )
        self.process = Process(f"agent-{self.name}", args, self.work_dir.parent / f"agent-{self.name}.log")
        self.process.start()
        return self

    def log(self) -> str:
        return self.process.log() if self.process else ""


@dataclass
class RealCluster:
    server: SqliteServer
    agents: list[Agent]
    tmp: Path

    def apply(self, text: str) -> None:
        with self.server.client() as client:
            response = client.post("/api/apply", content=text, headers={"Content-Type": "application/yaml"})
        assert response.status_code < 300, response.text

    def delete(self, kind: str, name: str) -> None:
        with self.server.client() as client:
            response = client.delete(f"/api/{kind}/{name}")
        assert response.status_code < 300, response.text

    def replicas(self) -> dict[str, dict[str, Any]]:
        with self.server.client() as client:
            items = client.get("/api/replicas").raise_for_status().json()["items"]
        return {item["metadata"]["name"]: item for item in items}

    def status(self, name: str) -> dict[str, Any]:
        return dict(self.replicas().get(name, {}).get("status", {}))

    def node(self, name: str) -> dict[str, Any]:
        with self.server.client() as client:
            return dict(client.get(f"/api/nodes/{name}").raise_for_status().json())

    def wait_status(self, name: str, check: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
        def met() -> dict[str, Any] | None:
            status = self.status(name)
            return status if status and check(status) else None

        try:
            return dict(wait_for(met, f"{name}: {what}", timeout_s=WAIT_S, interval_s=0.1))
        except AssertionError as exc:
            logs = "\n".join(agent.log()[-3000:] for agent in self.agents)
            raise AssertionError(f"{exc}; last status {self.status(name)}\n{logs}") from None

    def processes(self) -> list[psutil.Process]:
        """Every live process whose cwd is under one of the agents' work dirs (the replicas)."""
        roots = [str(agent.work_dir) for agent in self.agents]
        found = []
        for process in psutil.process_iter(["cwd", "status"]):
            cwd = process.info.get("cwd") or ""
            if process.info.get("status") != psutil.STATUS_ZOMBIE and any(cwd.startswith(r) for r in roots):
                found.append(process)
        return found

    def kill_everything(self) -> None:
        for agent in self.agents:
            if agent.process is not None:
                agent.process.stop(signal.SIGKILL)
        for process in self.processes():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        wait_for(lambda: not self.processes(), "every replica process to end", timeout_s=WAIT_S)


def alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
