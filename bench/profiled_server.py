"""``loadmaster server`` for the benches, optionally ready to profile its event loop over a window.

With ``profile``, the server's main thread (the event loop: what holds it up) is profiled with cProfile
from SIGUSR1 until SIGUSR2, which writes the file: a bench profiles its measured window only, not the
set-up before it. Read the file with ``python -m pstats FILE``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROFILED_SERVER = """\
import cProfile
import os
import signal

from loadmaster.cli.main import main

profile = cProfile.Profile()


def start(*_):
    profile.enable()


def stop(*_):
    profile.disable()
    profile.dump_stats(os.environ["BENCH_PROFILE_FILE"])


if __name__ == "__main__":  # the decision worker process (spawn) imports this module again
    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    main()
"""


def start_server_with(
    data_dir: Path, port: int, decide_in: str, profile: Path | None
) -> subprocess.Popen[bytes]:
    """``loadmaster server`` on SQLite; with ``profile``, ready to profile its main thread on SIGUSR1."""
    data_dir.mkdir(parents=True, exist_ok=True)
    script = data_dir / "run_server.py"
    script.write_text(PROFILED_SERVER)
    args = ["server", "--data-dir", str(data_dir), "--listen", f"127.0.0.1:{port}", "--decide-in", decide_in]
    environ = {**os.environ, "BENCH_PROFILE_FILE": str(profile)} if profile is not None else None
    log = (data_dir / "server.log").open("ab")
    return subprocess.Popen(
        [sys.executable, str(script), *args], stdout=log, stderr=subprocess.STDOUT, env=environ
    )
