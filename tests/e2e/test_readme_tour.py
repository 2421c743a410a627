"""The README's tour, run as written: every ``$`` line of its console block, from the top of the source
tree, against a control plane started by ``loadmaster up`` (the environment the README has the user
export). A line whose comment says it runs until Ctrl-C is interrupted once it has shown something.
A tour line that no longer works fails here instead of misleading a new user."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.processes import free_port
from tests.e2e.test_e2e_up import with_default_sigint

SOURCE = Path(__file__).resolve().parents[2]
COMMAND_TIMEOUT_S = 120


def tour_lines(readme: str) -> list[str]:
    """The ``$`` lines of the first console block after the "A short tour" heading."""
    section = readme.split("## A short tour", 1)[1]
    block = section.split("```console\n", 1)[1].split("```", 1)[0]
    return [line.removeprefix("$ ") for line in block.splitlines() if line.startswith("$ ")]


TOUR = tour_lines((SOURCE / "README.md").read_text())


def command_of(line: str) -> str:
    """``loadmaster get nodes`` -> ``get``; ``scripts/try-ha`` -> ``try-ha``."""
    words = shlex.split(line, comments=True)
    return words[1] if words[0].endswith("/loadmaster") else Path(words[0]).name


def test_the_tour_has_the_lines_a_new_user_is_promised() -> None:
    commands = {command_of(line) for line in TOUR}
    assert {"simulate", "get", "apply", "why", "preview", "status", "try-ha"} <= commands


@pytest.fixture(scope="module")
def tour_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """``loadmaster up`` running in the background; the environment its next steps say to export."""
    data_dir = tmp_path_factory.mktemp("tour") / "data"
    port = free_port()
    up_args = ["up", "--data-dir", str(data_dir), "--listen", f"127.0.0.1:{port}"]
    up = subprocess.Popen(
        with_default_sigint([sys.executable, "-m", "loadmaster", *up_args]),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        cwd=SOURCE,
    )
    try:
        assert up.stdout is not None
        shown = []
        for line in up.stdout:
            shown.append(line)
            if line.startswith("Ctrl-C stops"):
                break
        assert up.poll() is None, "".join(shown)
        yield {
            **os.environ,
            "LOADMASTER_SERVER": f"http://127.0.0.1:{port}",
            "LOADMASTER_TOKEN": (data_dir / "admin-token").read_text().strip(),
            "NO_COLOR": "1",
            "TRY_HA_DIR": str(data_dir.parent / "try-ha"),  # scripts/try-ha's scratch dir: the test's own
        }
    finally:
        if up.poll() is None:
            os.killpg(up.pid, signal.SIGINT)
            try:
                up.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(up.pid, signal.SIGKILL)
                up.wait()


def _run_in_a_terminal_until_shown_then_interrupt(words: list[str], env: dict[str, str]) -> tuple[int, str]:
    """A live view draws on a terminal: run it on a pseudo-terminal, wait for its first frame, Ctrl-C."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        with_default_sigint(words), stdin=terminal, stdout=terminal, stderr=terminal, cwd=SOURCE, env=env
    )
    os.close(terminal)
    shown = b""
    try:
        deadline = time.monotonic() + COMMAND_TIMEOUT_S
        while b"\n" not in shown and process.poll() is None and time.monotonic() < deadline:
            if select.select([controller], [], [], 1.0)[0]:
                shown += os.read(controller, 65536)
        process.send_signal(signal.SIGINT)
        process.wait(timeout=COMMAND_TIMEOUT_S)
        with contextlib.suppress(OSError):  # the terminal is gone once the process has exited
            while select.select([controller], [], [], 0.2)[0]:
                shown += os.read(controller, 65536)
    finally:
        os.close(controller)
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, shown.decode(errors="replace")


@pytest.mark.parametrize("line", TOUR, ids=[f"{command_of(line)}-{i}" for i, line in enumerate(TOUR)])
def test_a_tour_line_runs_as_written(tour_env: dict[str, str], line: str) -> None:
    words = shlex.split(line, comments=True)
    assert (SOURCE / words[0]).exists(), f"{words[0]} does not exist: run scripts/setup"
    if "Ctrl-C" in line.partition("#")[2]:
        code, output = _run_in_a_terminal_until_shown_then_interrupt(words, tour_env)
    else:
        done = subprocess.run(
            words,
            capture_output=True,
            text=True,
            cwd=SOURCE,
            env=tour_env,
            timeout=COMMAND_TIMEOUT_S,
            check=False,
        )
        code, output = done.returncode, done.stdout + done.stderr
    assert code == 0, f"$ {line}\n{output}"
    assert output.strip(), f"$ {line} printed nothing"
