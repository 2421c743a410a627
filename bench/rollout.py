"""A 1,000-replica service rolled to a new image in a timeline: virtual time of the rollout and wall time
of the leader's controller passes.

100 nodes, one Deployment with one service of 1,000 replicas (``web:1``), applied at 0; ``web:2`` applied
at 60 s; the timeline runs until every replica runs ``web:2`` (an expect at the end). The rollout takes
1,000 steps, one replica at a time. Measured: the rollout's virtual duration (rollout_started to
rollout_completed, from the audit log); the wall time of the leader's controller passes and scheduler
cycles that ran during the rollout (each ``ControllerLoop.reconcile_once`` and
``SchedulerService.reconcile_once``: count, mean, p50, p99, max, total); the whole run's wall time. A
pass per step that cost O(replicas) would show as a p50 that grows with the service's size:
``--replicas`` takes several sizes (e.g. 250 and 1000) to compare. Prints JSON.

    .venv/bin/python bench/rollout.py [--replicas 1000] [--nodes 100]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import logging
import statistics
import time
from typing import Any

from loadmaster.runtime.plane.process.logging_setup import configure_logging
from loadmaster.runtime.reconciling.controller_loop import ControllerLoop
from loadmaster.runtime.scheduling.scheduler_service import SchedulerService
from loadmaster.timeline.harness import run_timeline
from loadmaster.timeline.schema import build_timeline

APPLY_AT_S = 60
END_S = 1200  # the rollout ends long before (about 0.1 virtual s per step); the expect checks it did


def _deployment(image: str, replicas: int) -> dict[str, Any]:
    service = {
        "name": "api",
        "image": image,
        "replicas": replicas,
        "resources": {"cpu": "100m", "memory": "64Mi"},
    }
    return {
        "api_version": "loadmaster/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"services": [service]},
    }


def timeline_document(nodes: int, replicas: int) -> dict[str, Any]:
    return {
        "name": f"bench-rollout-{replicas}",
        "nodes": [{"name": f"n{i:04d}", "capacity": {"cpu": 64, "memory": "256Gi"}} for i in range(nodes)],
        "resources": [_deployment("web:1", replicas)],
        "timeline": [
            {"at": APPLY_AT_S, "do": {"apply": [_deployment("web:2", replicas)]}},
            {
                "at": END_S,
                "expect": {
                    "services": {"web/api": {"running": replicas, "images": {"web:2": replicas}}},
                    "deployments": {"web": {"rollout": {"state": "completed", "total_steps": replicas}}},
                },
            },
        ],
    }


def _timed(owner: Any, method: str, passes: list[tuple[float, float]]) -> Any:
    """``owner.method`` wrapped to record (virtual time, wall seconds) per call; the original."""
    original = getattr(owner, method)

    @functools.wraps(original)
    async def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
        at = asyncio.get_running_loop().time()
        started = time.perf_counter()
        try:
            return await original(self, *args, **kwargs)
        finally:
            passes.append((at, time.perf_counter() - started))

    setattr(owner, method, timed)
    return original


def _summary(passes: list[tuple[float, float]], start_s: float, end_s: float) -> dict[str, Any]:
    """Wall time of the passes that ran while the rollout did (its steps), in ms."""
    during = sorted(wall for at, wall in passes if start_s <= at <= end_s)
    if not during:
        return {"passes": 0}

    def ms(value: float) -> float:
        return round(value * 1000, 3)

    return {
        "passes": len(during),
        "mean_ms": ms(statistics.fmean(during)),
        "p50_ms": ms(during[len(during) // 2]),
        "p99_ms": ms(during[int(len(during) * 0.99)]),
        "max_ms": ms(during[-1]),
        "total_s": round(sum(during), 3),
    }


def _seconds(text: str) -> float:
    return float(text.rstrip("s"))


def run(nodes: int, replicas: int) -> dict[str, Any]:
    controller: list[tuple[float, float]] = []
    scheduler: list[tuple[float, float]] = []
    originals = (
        _timed(ControllerLoop, "reconcile_once", controller),
        _timed(SchedulerService, "reconcile_once", scheduler),
    )
    try:
        timeline = build_timeline(timeline_document(nodes, replicas))
        started = time.perf_counter()
        output = run_timeline(timeline)
        wall_s = time.perf_counter() - started
    finally:
        ControllerLoop.reconcile_once = originals[0]  # type: ignore[method-assign]
        SchedulerService.reconcile_once = originals[1]  # type: ignore[method-assign]
    events = output["events"]
    start = next(e for e in events if e["type"] == "rollout_started")
    end = next((e for e in events if e["type"] in ("rollout_completed", "rollout_aborted")), None)
    start_s = _seconds(start["at"])
    end_s = _seconds(end["at"]) if end else END_S
    return {
        "nodes": nodes,
        "replicas": replicas,
        "expect_passed": output["expect"]["passed"],
        "mismatches": output["expect"]["mismatches"][:3],
        "rollout_end": end["type"] if end else None,
        "rollout_virtual_s": round(end_s - start_s, 3),
        "steps": sum(1 for e in events if e["type"] == "rollout_step"),
        "controller_passes_during_rollout": _summary(controller, start_s, end_s),
        "scheduler_cycles_during_rollout": _summary(scheduler, start_s, end_s),
        "run_wall_s": round(wall_s, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, action="append")
    parser.add_argument("--nodes", type=int, default=100)
    args = parser.parse_args()
    configure_logging(level=logging.WARNING)
    print(json.dumps([run(args.nodes, count) for count in args.replicas or [1000]], indent=1))


if __name__ == "__main__":
    main()
