"""What consolidation gains on a GPU cluster over time (issue 18); prints JSON, not a test.

    .venv/bin/python bench/consolidation_gain.py [--factor 30000] [--config with|without|both]

Replays the Alibaba openb default pod list with arrivals and departures (``replay/``, the scheduler's
own cycle on a virtual clock) under ``gpu_pack``, with the default actions and with the same actions
but ``consolidate``. The trace's own load never blocks a pod (GPU use is ~0.2 % of its 12.9 M s), so
arrivals are compressed: each job arrives at ``t0 + (arrival - t0) / factor`` and keeps its recorded
runtime; at 30,000x every pod arrives within 430 s and half of them run longer than that, so the
cluster fills (6,087 GPUs asked of 6,212) while they arrive.

Per run:

* ``placed``, ``never_placed``; ``waited``: the jobs placed later than they arrived, their count and
  their waits (p50, p95, max, total; nearest rank, ``replay/figures.py``) and how many of them asked
  for how many GPUs (an openb job is one pod); ``wait_s``: the replay's
  percentiles over every job (0 for most);
* ``busy_window``: from the moment half the jobs have arrived (the trace's first half arrives over most
  of its time, into a cluster that stays nearly empty) to 600 s after the last arrival, the time-weighted
  means of the GPU allocated (share of capacity), the fragmented GPUs (``gpu_fragmentation_report``,
  measured every ``FRAGMENTATION_EVERY_S`` of virtual time) and the jobs pending, and the most jobs
  pending. The replay's own means (its summary) run to the last departure, months of virtual time in
  which the cluster drains, so they would say nothing about the minutes it is full;
* ``over_time``: the same figures as they stand when 50, 75, 90, 95, 98 and 100 % of the jobs have
  arrived, and 60 s and 600 s after the last arrival;
* ``moves``, ``evictions``, ``cycles``, scheduler cpu and wall seconds.

``side_by_side`` puts the two runs' main figures in pairs (with, without consolidate).
"""

from __future__ import annotations

import argparse
import bisect
import dataclasses
import json
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from loadmaster.core.model import SchedulerConfig
from loadmaster.replay.figures import nearest_rank, summary_of, time_weighted_mean
from loadmaster.replay.run_config import RunConfig
from loadmaster.replay.simulation import Replay, ReplayResult, Sample
from loadmaster.replay.trace import Arrivals, Trace
from loadmaster.replay.traces import load_trace
from loadmaster.runtime.plane.process.gc_policy import apply_gc_policy
from openb_trace import TRACES

# Virtual seconds between two fragmentation measurements: ~90 while the pods arrive at 30,000x (the
# replay's default, an hour, would measure once in that time).
FRAGMENTATION_EVERY_S = 5.0
ARRIVED_PCT = (50, 75, 90, 95, 98, 100)  # over_time: when this share of the jobs has arrived
AFTER_LAST_S = (60, 600)  # and this long after the last arrival


def compressed(trace: Trace, factor: float) -> Trace:
    start = min(job.arrival_s for job in trace.jobs)
    jobs = Arrivals.of(
        dataclasses.replace(job, arrival_s=start + (job.arrival_s - start) / factor) for job in trace.jobs
    )
    return Trace(f"{trace.name} /{factor:g}", trace.nodes, jobs, trace.queues)


def run(trace: Trace, name: str, actions: tuple[str, ...]) -> dict[str, Any]:
    started = time.perf_counter()
    config = RunConfig(name=name, scheduler=SchedulerConfig(profile="gpu_pack", actions=actions))
    result = Replay(trace, config, fragmentation_every_s=FRAGMENTATION_EVERY_S).run()
    summary = summary_of(result)
    late = [job for job in result.jobs if job.placed_s is not None and job.placed_s > job.arrival_s]
    waited = [job.placed_s - job.arrival_s for job in late if job.placed_s is not None]
    gpus = {job.job.name: job.job.tasks[0].request.get("gpu", 0) / 1000 for job in trace.jobs}
    return {
        **{key: summary[key] for key in ("name", "jobs", "placed", "never_placed")},
        "waited": {
            "jobs": len(waited),
            **{f"p{p}_s": _rounded(nearest_rank(waited, p)) for p in (50, 95)},
            "max_s": round(max(waited, default=0.0), 1),
            "total_s": round(sum(waited)),
            "by_gpu_request": _by_gpu_request(gpus[job.name] for job in late),
        },
        "wait_s": summary["wait_s"],
        "busy_window": busy_window(result, trace),
        "over_time": over_time(result, trace),
        **{key: summary[key] for key in ("moves", "evictions", "cycles", "scheduler_cpu_s")},
        "wall_s": round(time.perf_counter() - started, 1),
    }


def busy_window(result: ReplayResult, trace: Trace) -> dict[str, float]:
    """Time-weighted means from the moment half the jobs have arrived to ``AFTER_LAST_S[-1]`` after the
    last arrival (samples hold until the next)."""
    arrivals = sorted(job.arrival_s for job in trace.jobs)
    start, end = _arrived(arrivals, 50), arrivals[-1] + AFTER_LAST_S[-1]
    window = [s for s in result.samples if start <= s.at_s <= end]
    gpus = result.capacity["gpu"]
    return {
        "gpu_allocated": round(time_weighted_mean(window, "gpu_used") / gpus, 4),
        "fragmented_gpu": round(time_weighted_mean(window, "fragmented_gpu"), 1),
        "pending_jobs": round(time_weighted_mean(window, "pending_jobs"), 2),
        "pending_jobs_max": max((s.pending_jobs for s in window), default=0),
    }


def over_time(result: ReplayResult, trace: Trace) -> list[dict[str, Any]]:
    """The state when given shares of the jobs have arrived, and after the last arrival."""
    arrivals = sorted(job.arrival_s for job in trace.jobs)
    start, gpus = arrivals[0], result.capacity["gpu"]
    moments = [(f"{pct}% arrived", _arrived(arrivals, pct)) for pct in ARRIVED_PCT]
    moments += [(f"last arrival + {after} s", arrivals[-1] + after) for after in AFTER_LAST_S]
    rows = []
    for label, at_s in moments:
        sample = _standing(result.samples, at_s)
        rows.append({
            "when": label, "at_s": round(at_s - start, 1),
            "gpu_allocated": round(sample.gpu_used / gpus, 4),
            "fragmented_gpu": round(sample.fragmented_gpu, 1),
            "pending_jobs": sample.pending_jobs,
        })  # fmt: skip
    return rows


def _by_gpu_request(requests: Iterable[float]) -> dict[str, int]:
    """How many jobs asked for each GPU amount, smallest first."""
    return {f"{gpu:g}": n for gpu, n in sorted(Counter(requests).items())}


def _arrived(arrivals: list[float], pct: int) -> float:
    """When ``pct`` % of the jobs have arrived (nearest rank over the sorted arrival times)."""
    return arrivals[max(0, -(-pct * len(arrivals) // 100) - 1)]


def _standing(samples: Sequence[Sample], at_s: float) -> Sample:
    """The sample in force at ``at_s``: the last one taken at or before it."""
    i = bisect.bisect_right([s.at_s for s in samples], at_s)
    return samples[max(i - 1, 0)]


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def side_by_side(runs: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Each main figure as [first run, second run]."""
    figures = {
        "jobs_that_waited": lambda r: r["waited"]["jobs"],
        "wait_p95_of_those_s": lambda r: r["waited"]["p95_s"],
        "wait_max_s": lambda r: r["waited"]["max_s"],
        "wait_total_s": lambda r: r["waited"]["total_s"],
        "gpu_allocated_busy_window": lambda r: r["busy_window"]["gpu_allocated"],
        "fragmented_gpu_busy_window": lambda r: r["busy_window"]["fragmented_gpu"],
        "pending_jobs_max": lambda r: r["busy_window"]["pending_jobs_max"],
        "moves": lambda r: r["moves"],
        "evictions": lambda r: r["evictions"],
        "wall_s": lambda r: r["wall_s"],
    }
    return {name: [figure(r) for r in runs] for name, figure in figures.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--factor", type=float, default=30_000.0)
    parser.add_argument("--config", choices=("with", "without", "both"), default="both")
    args = parser.parse_args()
    apply_gc_policy()  # as the CLI does
    trace = compressed(load_trace("openb:default", TRACES), args.factor)
    actions = SchedulerConfig().actions
    runs = []
    if args.config in ("with", "both"):
        runs.append(run(trace, "gpu_pack", actions))
    if args.config in ("without", "both"):
        runs.append(
            run(trace, "gpu_pack without consolidate", tuple(a for a in actions if a != "consolidate"))
        )
    out: dict[str, Any] = {"trace": trace.name, "runs": runs}
    if len(runs) == 2:
        out["side_by_side"] = {"runs": [r["name"] for r in runs], **side_by_side(runs)}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
