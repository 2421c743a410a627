"""``loadmaster server`` for the benches, optionally ready to profile its event loop over a window.

With ``profile``, the server's main thread (the event loop: what holds it up) is profiled with cProfile
from SIGUSR1 until SIGUSR2, which writes the file: a bench profiles its measured window only, not the
set-up before it. Read the file with ``python -m pstats FILE``. ``FILE.stacks.json`` gets the
collector's pauses by generation, the size of the frozen heap, and the loop callbacks that ran 10 ms or
more in one go (what held the loop, by task). With ``BENCH_SAMPLE_STACKS=1`` in the environment a thread
also samples the main thread's stack every 2 ms (wall clock: time spent waiting for the GIL counts where
it waits): the busiest stacks and functions, and where each long callback was sampled. Opt-in: walking
another thread's frames (``sys._current_frames``) can crash CPython 3.11 (a segfault in about one run
of three when the worker threads were sampled too; rarer with the main thread alone, but not never).
``BENCH_CPROFILE=0`` in the environment leaves cProfile out (it slows the loop two- to threefold): the
rest then measures the loop as it runs.
``BENCH_GC_THRESHOLDS=young,middle,old`` sets other collector thresholds for the server (experiments).
(Sampling the server's other threads too, through ``sys._current_frames``, crashed CPython 3.11 in
about one run of three: only the main thread is sampled.)
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
CPROFILE = os.environ.get("BENCH_CPROFILE", "1") != "0"
SAMPLE_STACKS = os.environ.get("BENCH_SAMPLE_STACKS") == "1"  # opt-in: see the module doc
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
            in_callback.append(stack)
        time.sleep(SAMPLE_S)


in_callback = []  # the main thread's stacks sampled during the callback running now
long_callback_frames = collections.Counter()  # (callback, its innermost loadmaster frame) -> samples
long_callbacks = collections.Counter()  # what ran >= LONG_CALLBACK_S in one go on the loop: count
long_callback_s = collections.Counter()  # and total seconds
LONG_CALLBACK_S = 0.01


def time_loop_callbacks():
    # Every loop callback timed (wall clock, GIL waits included): the ones that hold the loop long name
    # themselves (a task's coroutine, or the callback's function).
    import asyncio.events

    run = asyncio.events.Handle._run

    def timed_run(handle):
        started = time.perf_counter()
        in_callback.clear()
        run(handle)
        took = time.perf_counter() - started
        if took >= LONG_CALLBACK_S and sampling.is_set():
            callback = handle._callback
            owner = getattr(callback, "__self__", None)
            coro = getattr(owner, "get_coro", lambda: None)() if owner is not None else None
            name = getattr(coro, "__qualname__", None) or getattr(callback, "__qualname__", repr(callback))
            bucket = "10-20ms" if took < 0.02 else "20-50ms" if took < 0.05 else ">=50ms"
            long_callbacks[(name, bucket)] += 1
            long_callback_s[name] += took
            for stack in list(in_callback):
                inner = next((entry for entry in stack if entry.startswith("loadmaster/")), stack[0])
                long_callback_frames[(name, inner)] += 1

    asyncio.events.Handle._run = timed_run


gc_pauses = collections.defaultdict(list)  # generation -> pauses (s) in the window
gc_started = [0.0]


def on_gc(phase, info):
    if phase == "start":
        gc_started[0] = time.perf_counter()
    elif sampling.is_set():
        gc_pauses[info["generation"]].append(time.perf_counter() - gc_started[0])


frozen_at_start = [0]


def start(*_):
    frozen_at_start[0] = gc.get_freeze_count()
    gc_pauses.clear()
    samples.clear()
    long_callbacks.clear()
    long_callback_s.clear()
    long_callback_frames.clear()
    sampling.set()
    if CPROFILE:
        profile.enable()


def stop(*_):
    if CPROFILE:
        profile.disable()
    sampling.clear()
    if CPROFILE:
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
        "frozen_objects": {"start": frozen_at_start[0], "end": gc.get_freeze_count()},
        "stacks_sampled": SAMPLE_STACKS,
        "sample_every_s": SAMPLE_S,
        "busy_samples": sum(samples.values()),
        "by_function_inclusive": by_function.most_common(60),
        "long_loop_callbacks": [[list(key), count] for key, count in long_callbacks.most_common(30)],
        "long_loop_callbacks_s": [[name, round(total, 3)] for name, total in long_callback_s.most_common(15)],
        "long_loop_callbacks_where": [[list(k), count] for k, count in long_callback_frames.most_common(30)],
        "top_stacks": [[count, list(stack[:12])] for stack, count in samples.most_common(15)],
    }
    with open(os.environ["BENCH_PROFILE_FILE"] + ".stacks.json", "w") as out:
        json.dump(summary, out, indent=1)


if __name__ == "__main__":  # the decision worker process (spawn) imports this module again
    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    if SAMPLE_STACKS:
        threading.Thread(target=sample_main_thread, daemon=True).start()
    gc.callbacks.append(on_gc)
    time_loop_callbacks()
    if os.environ.get("BENCH_GC_THRESHOLDS"):  # an experiment: other collector thresholds for the server
        from loadmaster.runtime.plane.process import gc_policy

        young, middle, old = (int(part) for part in os.environ["BENCH_GC_THRESHOLDS"].split(","))
        gc_policy.SERVER_YOUNG_THRESHOLD, gc_policy.SERVER_MIDDLE_THRESHOLD = young, middle
        gc_policy.OLD_THRESHOLD = old
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
