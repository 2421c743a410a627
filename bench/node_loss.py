"""Node loss at scale: 1,000 nodes, 3,000 replicas, 50 nodes lost at once (issue 14's figure).

One timeline through the same harness as `loadmaster simulate`: 1,000 single-replica services and 20
services of 100 replicas, spread over 1,000 nodes; at 5 s, 50 hosts go down at once (their last
heartbeat at 0 s: NotReady at 90 s, probed at 120 s, no answer by 125 s: policy single_replica acts).
Reported (JSON):

* ``virtual_probe_to_running_s``: virtual time from the probe (NotReady + node_loss_wait) until every
  single-replica replica that was on a lost node is Running elsewhere (its Running report);
* ``leader_pass_wall_ms``: wall time of the controller pass that returns them to Pending (node loss:
  target < 200 ms), and ``scheduler_cycles_placing`` the scheduler cycles that place them again;
* counts, so a run that moved nothing cannot look fast.

    .venv/bin/python bench/node_loss.py
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from loadmaster.runtime.plane.process.logging_setup import configure_logging
from loadmaster.runtime.reconciling.controller_loop import ControllerLoop
from loadmaster.runtime.requests import status_writes
from loadmaster.runtime.scheduling.scheduler_service import SchedulerService
from loadmaster.timeline import agents as timeline_agents
from loadmaster.timeline.harness import EPOCH, run_timeline
from loadmaster.timeline.schema import build_timeline

NODES, SINGLES, MULTI_SERVICES, MULTI_REPLICAS, LOST = 1000, 1000, 20, 100, 50
DOWN_AT_S, END_S = 5, 300
PROBE_AT_S = 90 + 30  # the last heartbeat at 0 s + not_ready_after + node_loss_wait
SERVICES_PER_DEPLOYMENT = 10


def timeline_document() -> dict[str, Any]:
    resources: list[dict[str, Any]] = []
    small = {"cpu": "100m", "memory": "128Mi"}
    for d in range(SINGLES // SERVICES_PER_DEPLOYMENT):
        services = [
            {"name": f"s{i}", "image": "app:1", "replicas": 1, "resources": small}
            for i in range(SERVICES_PER_DEPLOYMENT)
        ]
        resources.append(_deployment(f"one{d:03d}", services))
    multi = [
        {"name": f"m{i}", "image": "app:1", "replicas": MULTI_REPLICAS, "resources": small}
        for i in range(MULTI_SERVICES)
    ]
    resources.append(_deployment("many", multi))
    steps: list[dict[str, Any]] = [{"at": DOWN_AT_S, "do": {"node_down": f"n{i:04d}"}} for i in range(LOST)]
    steps.append(
        {"at": END_S, "expect": {"nodes": {f"n{i:04d}": {"state": "NotReady"} for i in range(LOST)}}}
    )
    return {
        "name": "bench-node-loss",
        "nodes": [{"name": f"n{i:04d}", "capacity": {"cpu": 16, "memory": "64Gi"}} for i in range(NODES)],
        "resources": resources,
        "timeline": steps,
    }


def _deployment(name: str, services: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "api_version": "loadmaster/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {"services": services},
    }


Timed = list[tuple[float, float, Any]]  # (virtual s, wall ms, result)


def _timed(method: Callable[..., Awaitable[Any]], record: Timed, clock_of: Callable[[Any], Any]) -> Any:
    async def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        result = await method(self, *args, **kwargs)
        at = (clock_of(self).now() - EPOCH).total_seconds()
        record.append((at, (time.perf_counter() - started) * 1000, result))
        return result

    return wrapper


def main() -> None:
    configure_logging(level=logging.WARNING)
    passes: Timed = []
    cycles: Timed = []
    running_at: dict[str, float] = {}
    ControllerLoop.reconcile_once = _timed(ControllerLoop.reconcile_once, passes, lambda s: s._clock)  # type: ignore[method-assign]
    SchedulerService.reconcile_once = _timed(SchedulerService.reconcile_once, cycles, lambda s: s._clock)  # type: ignore[method-assign]
    report = status_writes.report_replica_status

    async def recording_report(plane: Any, name: str, body: Any, reporter: Any = None) -> Any:
        result = await report(plane, name, body, reporter)
        if body.get("phase") == "Running":
            running_at[name] = (plane.clock.now() - EPOCH).total_seconds()
        return result

    timeline_agents.report_replica_status = recording_report  # type: ignore[assignment]
    timeline = build_timeline(timeline_document())
    started = time.perf_counter()
    output = run_timeline(timeline)
    wall_s = time.perf_counter() - started
    lost_events = [e for e in output["events"] if e["type"] == "node_lost"]
    moved = sorted({name for e in lost_events for name in e.get("replicas", [])})
    lost_at = sorted({float(e["at"].rstrip("s")) for e in lost_events})
    final = output["steps"][-1]["observed"]["replicas"]
    lost_nodes = {f"n{i:04d}" for i in range(LOST)}
    moved_running = [
        n for n in moved if final[n]["phase"] == "Running" and final[n]["node"] not in lost_nodes
    ]
    last_running = max((running_at.get(n, float("inf")) for n in moved), default=float("nan"))
    loss_passes = [wall for at, wall, outcome in passes if at in lost_at and outcome.written]
    # The cycles after the loss that placed something: (virtual s, wall ms, replicas placed).
    place_cycles = [
        (at, round(wall, 1), sum(r.decisions.values()))
        for at, wall, r in cycles
        if r is not None and at >= min(lost_at, default=0) and sum(r.decisions.values())
    ]
    print(
        json.dumps(
            {
                "nodes": NODES,
                "replicas": SINGLES + MULTI_SERVICES * MULTI_REPLICAS,
                "nodes_lost": LOST,
                "node_lost_events": len(lost_events),
                "node_lost_at_s": lost_at,
                "single_replica_moved": len(moved),
                "moved_running_elsewhere": len(moved_running),
                "multi_replica_left_on_lost_nodes": sum(
                    1 for r in final.values() if r["node"] in lost_nodes and r["owner"].startswith("many/")
                ),
                "virtual_probe_to_running_s": round(last_running - PROBE_AT_S, 3),
                "leader_pass_wall_ms": [round(w, 1) for w in loss_passes],
                "scheduler_cycles_placing": [
                    {"at_s": at, "wall_ms": wall, "placed": placed} for at, wall, placed in place_cycles
                ],
                "run_wall_s": round(wall_s, 2),
                "expect_passed": output["expect"]["passed"],
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
