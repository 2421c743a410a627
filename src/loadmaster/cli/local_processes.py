"""Child processes ``loadmaster up`` starts (the server and the simulated agent): started with their output
in a log file in the data dir, waited for, and stopped with SIGTERM (SIGKILL only if they hang)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from loadmaster.cli.remote.client import CommandError

STOP_GRACE_S = 10.0
POLL_S = 0.1
LOG_TAIL_LINES = 8


@dataclass(slots=True)
class Child:
    name: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def exited(self) -> int | None:
        return self.process.poll()

    def failure(self, doing: str) -> CommandError:
        code = self.process.returncode
        return CommandError(
            f"the {self.name} exited (code {code}) while {doing}; its log ends with:\n{self.log_tail()}"
        )

    def log_tail(self) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "  (no log)"
        return "\n".join(f"  {line}" for line in lines[-LOG_TAIL_LINES:]) or "  (empty log)"


def loadmaster_command(*args: str) -> list[str]:
    """This same installation's ``loadmaster`` CLI, whichever way the current one was started."""
    return [sys.executable, "-c", "from loadmaster.cli.main import main; main()", *args]


def start_child(name: str, args: list[str], log_path: Path) -> Child:
    log = log_path.open("ab")
    try:
        process = subprocess.Popen(loadmaster_command(*args), stdout=log, stderr=subprocess.STDOUT)
    finally:
        log.close()  # the child holds its own descriptor
    return Child(name, process, log_path)


def stop_child(child: Child) -> None:
    if child.exited() is not None:
        return
    child.process.terminate()
    try:
        child.process.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        child.process.kill()
        child.process.wait()


def wait_until(check: Callable[[], bool], child: Child, doing: str, timeout_s: float) -> None:
    """Poll ``check`` until it holds; fail if the child exits first or time runs out."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if child.exited() is not None:
            raise child.failure(doing)
        if time.monotonic() > deadline:
            raise CommandError(
                f"gave up after {timeout_s:g}s {doing}; the {child.name}'s log ends with:\n{child.log_tail()}"
            )
        time.sleep(POLL_S)


def is_ready(url: str) -> bool:
    """``GET /api/ready`` answers 200 (the server is up and its store answers)."""
    try:
        return httpx.get(f"{url}/api/ready", timeout=2.0).status_code == 200
    except httpx.TransportError:
        return False
