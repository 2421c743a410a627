"""A replay's figures (``summary.json``) from what it recorded.

* ``wait_s``: per placed job, placed time - arrival (nearest-rank percentiles: p50, p95, p99);
* ``utilisation``: time-weighted means of allocated / capacity, GPU and CPU, from the first sample to the
  last: a sample holds until the next, so with ``d_i`` the time to the next sample,
  ``mean = sum(used_i * d_i) / (capacity * sum(d_i))``;
* ``fragmented_gpu``: the time-weighted mean of the GPUs left in fragments, likewise;
* ``evictions``, ``moves``: decisions of those kinds the cycles made; ``scheduler_cpu_s``: CPU time spent
  in ``run_cycle`` (the rest of the wall time is the replay's own bookkeeping).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

from loadmaster.core.resources import CPU, GPU
from loadmaster.replay.simulation import ReplayResult, Sample


def nearest_rank(values: Sequence[float], percent: float) -> float | None:
    """The value at rank ceil(percent/100 * n) of the sorted values (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(percent / 100 * len(ordered)) - 1)]


def time_weighted_mean(samples: Sequence[Sample], value: str) -> float:
    """The mean of ``value`` over time, each sample holding until the next (0 with under two samples)."""
    if len(samples) < 2:
        return float(getattr(samples[0], value)) if samples else 0.0
    total = weighted = 0.0
    for sample, following in itertools.pairwise(samples):
        duration = following.at_s - sample.at_s
        total += duration
        weighted += float(getattr(sample, value)) * duration
    return weighted / total if total > 0 else float(getattr(samples[-1], value))


def summary_of(result: ReplayResult) -> dict[str, Any]:
    waits = [job.placed_s - job.arrival_s for job in result.jobs if job.placed_s is not None]
    placed = len(waits)
    capacity = result.capacity

    def utilisation(resource: str, field: str) -> float:
        if not capacity[resource]:
            return 0.0
        return round(time_weighted_mean(result.samples, field) / capacity[resource], 4)

    return {
        "name": result.config.name,
        "config": result.config.as_json(),
        "jobs": len(result.jobs),
        "placed": placed,
        "never_placed": len(result.jobs) - placed,
        "wait_s": {f"p{p}": _rounded(nearest_rank(waits, p)) for p in (50, 95, 99)},
        "utilisation": {"gpu": utilisation(GPU, "gpu_used"), "cpu": utilisation(CPU, "cpu_used")},
        "fragmented_gpu": round(time_weighted_mean(result.samples, "fragmented_gpu"), 2),
        "evictions": result.evictions,
        "moves": result.moves,
        "cycles": result.cycles,
        "scheduler_cpu_s": round(result.scheduler_cpu_s, 2),
        "wall_s": round(result.wall_s, 2),
    }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)
