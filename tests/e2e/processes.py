"""Real processes for the end-to-end tests: ``loadmaster server`` on a free 127.0.0.1 port with SQLite in a
tmp dir, and ``loadmaster agent --simulate``; started, waited for, stopped (SIGTERM) or killed (SIGKILL)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

START_TIMEOUT_S = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def loadmaster(*args: str) -> list[str]:
    return [sys.executable, "-c", "from loadmaster.cli.main import main; main()", *args]


def wait_for(check: Any, what: str, timeout_s: float = START_TIMEOUT_S, interval_s: float = 0.05) -> Any:
    """Poll ``check()`` until it returns something truthy (returned); fail the test after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g}s waiting for {what}")
        time.sleep(interval_s)


@dataclass
class Process:
    name: str
    args: list[str]
    log_path: Path
    popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            self.popen = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 10.0) -> int | None:
        if self.popen is None:
            return None
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
            try:
                self.popen.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        return self.popen.returncode

    def kill9(self) -> None:
        assert self.popen is not None
        os.kill(self.popen.pid, signal.SIGKILL)
        self.popen.wait()


@dataclass
class Server:
    data_dir: Path
    port: int = field(default_factory=free_port)
    process: Process | None = None
    options: tuple[str, ...] = ()  # more `loadmaster server` options

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token(self) -> str:
        return (self.data_dir / "admin-token").read_text().strip()

    def start(self) -> Server:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        listen = f"127.0.0.1:{self.port}"
        args = loadmaster("server", "--data-dir", str(self.data_dir), "--listen", listen, *self.options)
        self.process = Process("server", args, self.data_dir / "server.log")
        self.process.start()
        wait_for(self._ready, f"the server on port {self.port}")
        return self

    def _ready(self) -> bool:
        assert self.process is not None
        if not self.process.alive():
            raise AssertionError(f"the server exited early:\n{self.process.log()}")
        try:
            ready = httpx.get(f"{self.url}/api/ready", timeout=1.0).status_code == 200
        except httpx.TransportError:
            return False
        return ready and (self.data_dir / "admin-token").exists()

    def client(self, token: str | None = None) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {token or self.token}"}, timeout=60.0
        )

    def stop(self) -> int | None:
        return self.process.stop() if self.process else None


def start_agent(server: Server, count: int, capacity: str, prefix: str, log_dir: Path) -> Process:
    args = loadmaster(
        "agent",
        "--simulate",
        "--count",
        str(count),
        "--capacity",
        capacity,
        "--name-prefix",
        prefix,
        "--heartbeat",
        "5s",
        "--server",
        server.url,
        "--data-dir",
        str(server.data_dir),
    )
    agent = Process("agent", args, log_dir / f"agent-{prefix}.log")
    agent.start()
    return agent
