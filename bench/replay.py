"""Trace replay figures (issue 20). Prints JSON; not a test.

* ``openb``: the openb default pod list with departures, replayed once per config (default, gpu_pack,
  first_fit) in one run: each config's summary and its wall time, and the CPU time of the whole run.
* ``nasa``: the NASA iPSC gangs on 128 nodes, as recorded and at 1.5x and 3x the load (inter-arrival
  times divided: the log's own submit times are its start times, so as recorded nothing waits), with two
  configs: ``backfill`` (allocate places a later gang that fits while an earlier one waits: backfilling
  without reservations, at most ``BACKFILL_DEPTH`` gangs past the first that does not fit) and ``no
  backfill`` (``backfill_depth: 0``: the first gang that does not fit blocks every later one), beside a
  strict FCFS baseline computed here (a gang starts only after every earlier gang started, when enough
  nodes are free). Each config's wait p50/p95/p99, wall time and scheduler CPU time.
* ``alibaba``: the first 10,000 tasks of the Alibaba 2017 trace (every instance), and how far into the whole
  trace a replay gets in ``--budget-s`` of wall time (default 600), with the ``backfill`` config;
  ``--search-backoff MIN:MAX`` adds the control plane's failed-search backoff for consolidate (labelled).

Every run caps consolidation's moves per cycle as the control plane does (``RunConfig.max_moves_per_cycle``,
the server's default of one; docs/replay.md).
Every NASA and alibaba replay runs within a wall-time budget (``--budget-s``; the NASA runs and the
alibaba prefix get ``--run-budget-s``, default 1800): one that runs out reports ``finished: false`` with
how far it got (virtual time, jobs placed and arrived, tasks placed and arrived; an alibaba-2017 job is
one of its batch tasks, and its tasks are that task's instances) instead of its summary, so the bench
always ends.
The budget is checked between instants of virtual time: a run overruns it by at most one instant's cycle.
Memory: each NASA and alibaba run reports its peak resident memory (``peak_rss_mib``, sampled at most once
per virtual second and at the end), each alibaba trace its reader's time (``load_s``), and the output ends
with the process's own peak (``process_peak_rss_mib``).

    .venv/bin/python bench/replay.py [--case openb|nasa|alibaba] [--factor 3] [--budget-s 600]
                                     [--run-budget-s 1800] [--search-backoff 30:300]
"""

from __future__ import annotations

import argparse
import dataclasses
import heapq
import json
import resource
import time
from pathlib import Path
from typing import Any

import psutil

from loadmaster.core.model import DEFAULT_ACTIONS, Profile, SchedulerConfig
from loadmaster.core.search_backoff import SearchBackoff
from loadmaster.replay.figures import nearest_rank, summary_of
from loadmaster.replay.run import replay_all
from loadmaster.replay.run_config import RunConfig
from loadmaster.replay.simulation import Replay
from loadmaster.replay.trace import Arrivals, Trace
from loadmaster.replay.traces import load_trace
from loadmaster.runtime.plane.process.gc_policy import apply_gc_policy
from openb_trace import TRACES

# Gangs tried past the first that does not fit, in each action of a cycle (config.backfill_depth): keeps
# a cycle's work bounded when the Pending backlog runs into thousands (NASA at 3x, alibaba-2017).
BACKFILL_DEPTH = 100
PROCESS = psutil.Process()


def backfill_configs() -> list[RunConfig]:
    """The two NASA configs: backfilling (bounded depth) and strict first come, first served."""
    return [
        RunConfig(name="backfill", scheduler=SchedulerConfig(backfill_depth=BACKFILL_DEPTH)),
        RunConfig(name="no backfill", scheduler=SchedulerConfig(backfill_depth=0)),
    ]


class BudgetSpentError(Exception):
    """The wall-time budget ran out: the replay stops where it got."""


def openb_case(out: Path) -> dict[str, Any]:
    trace = load_trace("openb:default", TRACES)
    profiles: tuple[Profile, ...] = ("default", "gpu_pack", "first_fit")
    configs = [RunConfig(name=p, scheduler=SchedulerConfig(profile=p)) for p in profiles]
    started = time.process_time()
    summary = replay_all(trace, configs, out / "openb")
    # the process's CPU time for all configs (with the report): on a shared machine wall_s grows with
    # the load, this does much less
    return {
        "case": "openb:default",
        "process_cpu_s": round(time.process_time() - started, 2),
        "configs": summary["configs"],
    }


def fcfs_waits(trace: Trace, nodes: int) -> list[float]:
    """Strict first come, first served: each gang starts once every earlier one has, when it fits."""
    free, previous_start = nodes, 0.0
    running: list[tuple[float, int]] = []
    waits: list[float] = []
    for job in trace.jobs:
        need = len(job.job.tasks)
        start = max(job.arrival_s, previous_start)
        while running and (running[0][0] <= start or free < need):
            end, released = heapq.heappop(running)
            start, free = max(start, end), free + released
        free -= need
        heapq.heappush(running, (start + (job.runtime_s or 0.0), need))
        previous_start = start
        waits.append(start - job.arrival_s)
    return waits


def compressed(trace: Trace, factor: float) -> Trace:
    """The trace with its inter-arrival times divided by ``factor`` (the same jobs at ``factor`` times the
    load): the log's own submit times are its start times, so at factor 1 nothing ever waits."""
    jobs = Arrivals.of(dataclasses.replace(job, arrival_s=job.arrival_s / factor) for job in trace.jobs)
    return Trace(f"{trace.name} x{factor:g}", trace.nodes, jobs, trace.queues)


def rss_mib() -> float:
    return float(PROCESS.memory_info().rss) / 2**20


def run_within(trace: Trace, config: RunConfig, budget_s: float) -> dict[str, Any]:
    """The replay's summary when it ends within ``budget_s`` of wall time, else where it got; with the
    run's peak resident memory (sampled once per virtual second at most, and at the end)."""
    reached: dict[str, float] = {"virtual_s": 0.0, "jobs_placed": 0, "peak_rss_mib": rss_mib()}
    deadline = time.perf_counter() + budget_s
    started = time.perf_counter()
    sampled_at = -1.0

    def stop_at_budget(now: float, placed: int) -> None:
        nonlocal sampled_at
        reached.update(virtual_s=now, jobs_placed=placed)
        if now >= sampled_at + 1.0:
            reached["peak_rss_mib"] = max(reached["peak_rss_mib"], rss_mib())
            sampled_at = now
        if time.perf_counter() > deadline:
            raise BudgetSpentError

    replay = Replay(trace, config)
    try:
        summary = summary_of(replay.run(stop_at_budget))
        return {"finished": True, **summary, "peak_rss_mib": round(max(reached["peak_rss_mib"], rss_mib()))}
    except BudgetSpentError:
        reached["peak_rss_mib"] = round(max(reached["peak_rss_mib"], rss_mib()))
        arrived = trace.jobs.arrived_by(reached["virtual_s"])  # counted from the arrays: no job is made
        return {
            "name": config.name,
            "finished": False,
            "budget_s": budget_s,
            "wall_s": round(time.perf_counter() - started, 1),
            **reached,
            "jobs": len(trace.jobs),
            "jobs_arrived": arrived,
            "tasks_arrived": int(trace.jobs.task_counts[:arrived].sum()),
            "tasks_placed": replay.tasks_placed,
            "tasks": int(trace.jobs.task_counts.sum()),
            "last_arrival_s": trace.jobs.last_arrival_s,
        }


def nasa_case(factors: tuple[float, ...], budget_s: float) -> list[dict[str, Any]]:
    base = load_trace("nasa-ipsc", TRACES)
    cases = []
    for factor in factors:
        trace = compressed(base, factor)
        fcfs = fcfs_waits(trace, len(trace.nodes))
        fcfs_figures = {"wait_s": {f"p{p}": round(nearest_rank(fcfs, p) or 0.0, 1) for p in (50, 95, 99)}}
        runs = [run_within(trace, config, budget_s) for config in backfill_configs()]
        cases.append({"case": trace.name, "jobs": len(trace.jobs), "loadmaster": runs, "fcfs": fcfs_figures})
    return cases


def alibaba_case(budget_s: float, first_budget_s: float, without_consolidate: bool = False,
                 search_backoff: SearchBackoff | None = None) -> dict[str, Any]:  # fmt: skip
    backfill = backfill_configs()[0]
    label = ""
    if without_consolidate:  # a labelled second configuration: the default actions less consolidate
        actions = tuple(a for a in DEFAULT_ACTIONS if a != "consolidate")
        backfill = dataclasses.replace(
            backfill, scheduler=dataclasses.replace(backfill.scheduler, actions=actions)
        )
        label = " (without consolidate)"
    if search_backoff is not None:  # labelled: the control plane's failed-search backoff, set
        backfill = dataclasses.replace(backfill, search_backoff=search_backoff)
        label += (
            f" (consolidate's search backoff {search_backoff.consolidate_min_s:g}"
            f"..{search_backoff.consolidate_max_s:g} s)"
        )
    runs = {}
    for key, spec, name, budget in (
        ("first_10000_tasks", "alibaba-2017:10000", "first 10,000 tasks", first_budget_s),
        ("whole_trace", "alibaba-2017", "whole trace", budget_s),
    ):
        started = time.perf_counter()
        trace = load_trace(spec, TRACES)
        load_s = round(time.perf_counter() - started, 2)  # the reader's own time, before the replay
        run = run_within(trace, dataclasses.replace(backfill, name=f"{name}{label}"), budget)
        runs[key] = {"load_s": load_s, **run}
        del trace, run  # the next trace does not count this one's memory
    return {"case": "alibaba-2017", **runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=("openb", "nasa", "alibaba"), action="append")
    parser.add_argument("--budget-s", type=float, default=600.0, help="alibaba's whole-trace run")
    parser.add_argument("--run-budget-s", type=float, default=1800.0, help="each NASA run, alibaba's prefix")
    parser.add_argument("--factor", type=float, action="append", help="NASA load factors (default 1, 1.5, 3)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/loadmaster-replay-bench"))
    parser.add_argument(
        "--search-backoff",
        metavar="MIN:MAX",
        help="alibaba's runs with consolidate's failed-search backoff, in seconds (labelled; e.g. 30:300)",
    )
    parser.add_argument(
        "--without-consolidate",
        action="store_true",
        help="alibaba's runs with the default actions less consolidate (labelled)",
    )
    args = parser.parse_args()
    apply_gc_policy()  # as the CLI does
    cases = args.case or ["openb", "nasa", "alibaba"]
    results = []
    for case in cases:
        if case == "openb":
            results.append(openb_case(args.out))
        elif case == "nasa":
            factors = tuple(args.factor) if args.factor else (1.0, 1.5, 3.0)
            results.extend(nasa_case(factors, args.run_budget_s))
        else:
            backoff = None
            if args.search_backoff:
                least, most = (float(part) for part in args.search_backoff.split(":"))
                backoff = SearchBackoff(consolidate_min_s=least, consolidate_max_s=most)
            results.append(alibaba_case(args.budget_s, args.run_budget_s, args.without_consolidate, backoff))
    # the whole process's peak (the runs' own peaks are in each run's peak_rss_mib)
    results.append({"process_peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)})
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
