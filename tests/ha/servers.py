"""Several real ``loadmaster server --store etcd://...`` processes on free 127.0.0.1 ports, one etcd.

``server_group(count, ...)`` launches them together and waits until each answers ``/api/ready``;
each server can then be killed (SIGKILL), paused (SIGSTOP, keeping its sockets), resumed or stopped.
``leader_status`` asks one server who leads; ``wait_for_leader`` polls the live servers until one of
them says it leads, and returns it with the seconds that took (the failover time when started at a
kill). Every server writes its own admin token; they all land in the shared store, so any works
against every server: the group uses the first server's.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.processes import Process, free_port, loadmaster, wait_for

# A status call to a live server answers in milliseconds; a paused one never does.
STATUS_TIMEOUT_S = 1.0
POLL_S = 0.02


@dataclass
class HaServer:
    name: str
    data_dir: Path
    store_url: str
    lease_ttl_s: int
    port: int = field(default_factory=free_port)
    process: Process | None = None
    paused: bool = False
    killed: bool = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token(self) -> str:
        return (self.data_dir / "admin-token").read_text().strip()

    def launch(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        args = loadmaster(
            "server", "--data-dir", str(self.data_dir), "--listen", f"127.0.0.1:{self.port}",
            "--store", self.store_url, "--lease-ttl", str(self.lease_ttl_s),
        )  # fmt: skip
        self.process = Process(self.name, args, self.data_dir / "server.log")
        self.process.start()

    def is_ready(self) -> bool:
        if not self.alive:
            raise AssertionError(f"server {self.name} exited early:\n{self.log()}")
        try:
            ready = httpx.get(f"{self.url}/api/ready", timeout=STATUS_TIMEOUT_S).status_code == 200
        except httpx.TransportError:
            return False
        return ready and (self.data_dir / "admin-token").exists()

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.alive()

    @property
    def answers(self) -> bool:
        """Running and not paused: it can answer a request."""
        return self.alive and not self.paused

    def log(self) -> str:
        return self.process.log() if self.process is not None else ""

    def client(self, token: str, timeout_s: float = 10.0) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=timeout_s
        )

    def leader_status(self, token: str) -> dict[str, Any] | None:
        """This server's ``/api/admin/leader-status``; None if it does not answer."""
        try:
            response = httpx.get(
                f"{self.url}/api/admin/leader-status",
                headers={"Authorization": f"Bearer {token}"},
                timeout=STATUS_TIMEOUT_S,
            )
        except httpx.TransportError:
            return None
        return dict(response.raise_for_status().json())

    def kill9(self) -> None:
        assert self.process is not None
        self.process.kill9()
        self.killed = True

    def pause(self) -> None:
        assert self.process is not None and self.process.popen is not None
        os.kill(self.process.popen.pid, signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        assert self.process is not None and self.process.popen is not None
        os.kill(self.process.popen.pid, signal.SIGCONT)
        self.paused = False

    def stop(self) -> int | None:
        """SIGTERM (after SIGCONT if paused); the exit code."""
        if self.paused:
            self.resume()
        return self.process.stop() if self.process is not None else None


@dataclass
class ServerGroup:
    servers: list[HaServer]

    @classmethod
    def of(cls, count: int, store_url: str, base_dir: Path, lease_ttl_s: int) -> ServerGroup:
        return cls([HaServer(f"s{i}", base_dir / f"s{i}", store_url, lease_ttl_s) for i in range(count)])

    def start(self) -> None:
        for server in self.servers:  # all at once: each takes about a second to import and bind
            server.launch()
        for server in self.servers:
            wait_for(server.is_ready, f"server {server.name} ready on port {server.port}")

    @property
    def token(self) -> str:
        return self.servers[0].token

    def answering(self) -> list[HaServer]:
        return [server for server in self.servers if server.answers]

    def statuses(self, servers: Sequence[HaServer] | None = None) -> dict[str, dict[str, Any] | None]:
        return {s.name: s.leader_status(self.token) for s in (servers or self.answering())}

    def wait_for_leader(
        self, timeout_s: float, among: Sequence[HaServer] | None = None
    ) -> tuple[HaServer, float]:
        """The first server (of ``among``, default: every answering one) that says it leads, and the
        seconds it took to find it."""
        candidates = list(among) if among is not None else self.answering()
        started = time.monotonic()
        while True:
            for server in candidates:
                status = server.leader_status(self.token)
                if status is not None and status["is_leader"]:
                    return server, time.monotonic() - started
            if time.monotonic() - started > timeout_s:
                raise AssertionError(
                    f"no server of {[s.name for s in candidates]} led within {timeout_s:g}s: "
                    f"{self.statuses(candidates)}\n{self.logs()}"
                )
            time.sleep(POLL_S)

    def by_identity(self, identity: str) -> HaServer:
        for server in self.servers:
            status = server.leader_status(self.token) if server.answers else None
            if status is not None and status["self"] == identity:
                return server
        raise AssertionError(f"no answering server is {identity!r}")

    def logs(self) -> str:
        return "\n".join(f"--- {s.name} ({s.url}) ---\n{s.log()[-3000:]}" for s in self.servers)

    def stop(self) -> dict[str, int | None]:
        """SIGTERM every server not killed by the test; their exit codes by name."""
        return {server.name: server.stop() for server in self.servers if not server.killed}


@contextmanager
def server_group(count: int, store_url: str, base_dir: Path, lease_ttl_s: int) -> Iterator[ServerGroup]:
    """A started group, stopped on exit; every server the test did not kill must exit cleanly."""
    group = ServerGroup.of(count, store_url, base_dir, lease_ttl_s)
    try:
        group.start()
        yield group
    finally:
        codes = group.stop()
        for server in group.servers:  # never leave a process behind, whatever happened
            if server.alive and server.process is not None:
                server.process.stop(signal.SIGKILL)
    assert all(code == 0 for code in codes.values()), f"exit codes {codes}\n{group.logs()}"
