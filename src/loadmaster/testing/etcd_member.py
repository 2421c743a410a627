"""One etcd server process: its command line, its health, and the signals the fault tests send it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

_HEALTH_POLL_S = 0.02
_LOG_TAIL_LINES = 25


class EtcdStartError(RuntimeError):
    """An etcd member did not become healthy (the message carries the end of its log)."""


def _clean_environment() -> dict[str, str]:
    # etcd reads ETCD_* variables as flags; one left in the environment would change every member.
    return {name: value for name, value in os.environ.items() if not name.startswith("ETCD_")}


@dataclass
class EtcdMember:
    binary: str
    name: str
    host: str
    client_port: int
    peer_port: int
    data_dir: Path
    initial_cluster: str
    cluster_token: str
    heartbeat_ms: int = 100
    election_timeout_ms: int = 1000
    _process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _paused: bool = field(default=False, repr=False)

    @property
    def endpoint(self) -> str:
        return f"{self.host}:{self.client_port}"

    @property
    def log_path(self) -> Path:
        return self.data_dir.with_suffix(".log")

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def is_running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def is_paused(self) -> bool:
        return self._paused and self.is_running

    def command(self) -> list[str]:
        client_url = f"http://{self.endpoint}"
        peer_url = f"http://{self.host}:{self.peer_port}"
        etcd = [
            self.binary,
            "--name",
            self.name,
            "--data-dir",
            str(self.data_dir),
            "--listen-client-urls",
            client_url,
            "--advertise-client-urls",
            client_url,
            "--listen-peer-urls",
            peer_url,
            "--initial-advertise-peer-urls",
            peer_url,
            "--initial-cluster",
            self.initial_cluster,
            "--initial-cluster-state",
            "new",
            "--initial-cluster-token",
            self.cluster_token,
            "--heartbeat-interval",
            str(self.heartbeat_ms),
            "--election-timeout",
            str(self.election_timeout_ms),
            "--logger",
            "zap",
            "--log-outputs",
            "stderr",
        ]
        setpriv = shutil.which("setpriv")
        # The kernel kills the member if this process dies before it can (see etcd_cluster.py).
        return [setpriv, "--pdeathsig", "KILL", "--", *etcd] if setpriv else etcd

    def start(self) -> None:
        """Start the process (on a restart, etcd finds its data dir and ignores the --initial-* flags)."""
        if self.is_running:
            raise RuntimeError(f"etcd member {self.name} is already running (pid {self.pid})")
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                self.command(), stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=_clean_environment()
            )
        self._paused = False

    def is_healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://{self.endpoint}/health", timeout=0.5) as response:
                return b'"true"' in response.read()
        except (urllib.error.URLError, OSError):
            return False

    def wait_healthy(self, timeout_s: float = 20.0) -> None:
        """Block until ``/health`` says true (etcd 3.4: the member has a leader and serves reads)."""
        deadline = time.monotonic() + timeout_s
        while not self.is_healthy():
            if not self.is_running:
                problem = "exited during start-up"
            elif time.monotonic() >= deadline:
                problem = f"is not healthy after {timeout_s}s"
            else:
                time.sleep(_HEALTH_POLL_S)
                continue
            raise EtcdStartError(f"etcd member {self.name} {problem}:\n{self.log_tail()}")

    def log_tail(self) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except FileNotFoundError:
            return "(no log)"
        return "\n".join(lines[-_LOG_TAIL_LINES:])

    def _signal(self, signum: signal.Signals) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signum)

    def stop(self, timeout_s: float = 10.0) -> None:
        """Graceful stop (SIGTERM); SIGKILL if it has not exited within ``timeout_s``."""
        if self._process is None:
            return
        self._signal(signal.SIGTERM)
        self._signal(signal.SIGCONT)  # a paused process only acts on SIGTERM once continued
        try:
            self._process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
        self._paused = False

    def kill(self) -> None:
        """SIGKILL and reap: the crash case, no graceful shutdown."""
        if self._process is None:
            return
        self._signal(signal.SIGKILL)
        self._process.wait()
        self._paused = False

    def pause(self) -> None:
        """SIGSTOP: the process stays alive and keeps its sockets open, but answers nothing."""
        if not self.is_running:
            raise RuntimeError(f"etcd member {self.name} is not running")
        self._signal(signal.SIGSTOP)
        self._wait_state("stopped", lambda state: state in "Tt")
        self._paused = True

    def resume(self) -> None:
        self._signal(signal.SIGCONT)
        self._paused = False

    def _wait_state(self, what: str, wanted: Callable[[str], bool], timeout_s: float = 5.0) -> None:
        """Signals are delivered asynchronously: wait until /proc shows the process in the wanted state,
        so a test's next request really meets a stopped member instead of racing the signal."""
        assert self._process is not None
        stat = Path(f"/proc/{self._process.pid}/stat")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            # the state is the field after the parenthesised command name
            if wanted(stat.read_text().rsplit(")", 1)[1].split()[0]):
                return
            time.sleep(0.005)
        raise RuntimeError(f"etcd member {self.name} did not become {what} within {timeout_s:g}s")

    def restart(self, timeout_s: float = 20.0) -> None:
        """Stop, then start again on the same ports and data, and wait until healthy."""
        self.stop()
        self.start()
        self.wait_healthy(timeout_s)
