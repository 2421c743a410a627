"""``loadmaster server`` for the benches, optionally ready to profile its event loop over a window.

With ``profile``, the server's main thread (the event loop: what holds it up) is profiled with cProfile
from SIGUSR1 until SIGUSR2, which writes the file: a bench profiles its measured window only, not the
set-up before it. Read the file with ``python -m pstats FILE``. Meanwhile a thread samples the main
thread's stack every 2 ms (wall clock: time spent waiting for the GIL counts where it waits) and writes
the busiest stacks and functions to ``FILE.stacks.json``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# A load average above this on the 2-core machine: other work took CPU from the server meanwhile.
QUIET_LOAD = 2.0

PROFILED_SERVER = """\
import collections
import cProfile
import gc
import json
import os
import signal
import sys
import threading
import time

from loadmaster.cli.main import main

profile = cProfile.Profile()
samples = collections.Counter()
sampling = threading.Event()
SAMPLE_S = 0.002
IDLE = ("(select)", "(poll)", "(_run_once)")  # the loop waiting for work


def sample_main_thread():
    # Wall-clock samples of the main thread's stack (waiting for the GIL included): where the event loop
    # is when it is not idle in epoll. A poor man's py-spy (not installed here).
    main_id = threading.main_thread().ident
    while True:
        sampling.wait()
        frame = sys._current_frames().get(main_id)
        stack = []
        while frame is not None and len(stack) < 40:
            code = frame.f_code
            stack.append(f"{code.co_filename.rsplit('/src/', 1)[-1]}:{frame.f_lineno}({code.co_name})")
            frame = frame.f_back
        if stack and not stack[0].endswith(IDLE):
            samples[tuple(stack)] += 1
        time.sleep(SAMPLE_S)


gc_pauses = collections.defaultdict(list)  # generation -> pauses (s) in the window
gc_started = [0.0]


def on_gc(phase, info):
    if phase == "start":
        gc_started[0] = time.perf_counter()
    elif sampling.is_set():
        gc_pauses[info["generation"]].append(time.perf_counter() - gc_started[0])


def start(*_):
    gc_pauses.clear()
    samples.clear()
    sampling.set()
    profile.enable()


def stop(*_):
    profile.disable()
    sampling.clear()
    profile.dump_stats(os.environ["BENCH_PROFILE_FILE"])
    by_function = collections.Counter()
    for stack, count in samples.items():
        for entry in set(stack):
            by_function[entry] += count
    summary = {
        "gc_pauses": {
            f"generation_{generation}": {
                "count": len(pauses), "total_s": round(sum(pauses), 3), "max_s": round(max(pauses), 3)
            }
            for generation, pauses in sorted(gc_pauses.items())
        },
        "sample_every_s": SAMPLE_S,
        "busy_samples": sum(samples.values()),
        "by_function_inclusive": by_function.most_common(60),
        "top_stacks": [[count, list(stack[:12])] for stack, count in samples.most_common(15)],
    }
    with open(os.environ["BENCH_PROFILE_FILE"] + ".stacks.json", "w") as out:
        json.dump(summary, out, indent=1)


if __name__ == "__main__":  # the decision worker process (spawn) imports this module again
    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    threading.Thread(target=sample_main_thread, daemon=True).start()
    gc.callbacks.append(on_gc)
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
