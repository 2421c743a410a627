"""``GET /api/replicas/{name}/why``: the stored explanation of a replica's last attempt, and a fresh one.

The stored part comes from the replica's Phase condition (what the scheduler wrote at its last
attempt: reason, message, attempts, next_attempt_at). For a Pending replica the explanation is
computed again against the cluster as it is now (every node, every reason: the condition keeps only
a few nodes), so ``why`` answers the current question even while the replica waits out a backoff.
The cluster is assembled on the event loop (from the live cache); the engine runs in a worker thread.
``scale_up`` is the replica's verdict (fits now / fits after scale-up with template T / infeasible), the
one the scheduler's scale-up path and the preview give (``scale_up_verdict.py``).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime
from typing import Any

from loadmaster.core.model import Cluster, TaskStatus
from loadmaster.manifests import REPLICA
from loadmaster.placement.diagnosis import Explanation, explain
from loadmaster.runtime.plane.errors import NotFoundError
from loadmaster.runtime.plane.object_cache import ObjectCache
from loadmaster.runtime.plane.phase_condition import phase_condition_of
from loadmaster.runtime.scheduling.cycle_writes import HOST_PLACEMENT_REASON, missing_hosts
from loadmaster.runtime.scheduling.explaining.stickiness import stickiness_of
from loadmaster.runtime.scheduling.model.scheduling_model import SchedulingModel
from loadmaster.runtime.scheduling.preview.preview import ranked_candidates
from loadmaster.runtime.scheduling.scale_up.scale_up_verdict import fits_now, is_unplaceable, verdicts
from loadmaster.session import Session
from loadmaster.wire import WhyAnswer

# A replica in these phases holds a node: ``why`` shows how that node ranks for it.
PLACED_PHASES = frozenset({"Scheduled", "Running"})


async def why(name: str, model: SchedulingModel, cache: ObjectCache, now: datetime) -> WhyAnswer:
    cached = cache.get(REPLICA, name)
    if cached is None:
        raise NotFoundError(f"replicas/{name} not found")
    status = cached.obj.get("status", {})
    condition = phase_condition_of(status) or {}
    details = condition.get("details", {})
    phase = status.get("phase", "Pending")
    answer: WhyAnswer = {
        "replica": name,
        "phase": phase,
        "node_ref": status.get("node_ref"),
        "summary": details.get("summary", {}),
        "nodes": details.get("nodes", {}),
        "hints": details.get("hints", []),
        "reason": condition.get("reason", ""),
        "message": condition.get("message", ""),
        "attempts": details.get("attempts", 0),
        "next_attempt_at": details.get("next_attempt_at"),
        "last_attempt_at": condition.get("last_transition_time"),
        "fresh": False,
    }
    sticky = stickiness_of(cached.obj.get("spec", {}), status)
    if sticky is not None and phase in (*PLACED_PHASES, "Pending"):
        answer["sticky"] = sticky
    if phase in PLACED_PHASES and answer["node_ref"]:
        build = await model.build_off_loop(now)
        placement = await asyncio.to_thread(
            _placement, build.cluster, name, answer["node_ref"], now.timestamp()
        )
        if placement is not None:
            answer["placement"] = placement
        return answer
    if phase != "Pending":
        return answer
    build = await model.build_off_loop(now, include=frozenset({name}))
    if name not in build.replicas:
        blocked = next((b for b in build.blocked if b.replica.name == name), None)
        if blocked is not None:
            answer["reason"], answer["message"] = blocked.reason, blocked.message
        return answer
    explanation = await asyncio.to_thread(_explain, build.cluster, name, now.timestamp())
    answer["summary"] = {str(category): count for category, count in explanation.summary.items()}
    answer["nodes"], answer["hints"], answer["fresh"] = explanation.nodes, explanation.hints, True
    spec = cached.obj.get("spec", {})
    answer["scale_up"] = fits_now()
    if is_unplaceable(explanation, len(build.nodes), spec.get("placement")):
        task, templates = build.replicas[name].as_task(), model.templates()
        answer["scale_up"] = (await asyncio.to_thread(verdicts, [task], templates, build.cluster.config))[0]
    if spec.get("placement") == "hosts":
        missing = missing_hosts(spec, build.nodes)
        if missing:
            answer["pending"] = {"reason": HOST_PLACEMENT_REASON, "missing": missing}
    return answer


def _placement(cluster: Cluster, name: str, node: str, now_s: float) -> dict[str, Any] | None:
    """Why the replica is on ``node``: the engine's ranking of every node for it, computed now with
    the replica's own resources given back (as if it were placed again), its node against the
    runner-up and the margin between their totals. Pure (runs in a worker thread)."""
    if not any(task.name == name for job in cluster.jobs for task in job.tasks):
        return None
    jobs = [
        replace(
            job,
            tasks=tuple(
                replace(task, status=TaskStatus.PENDING, node=None) if task.name == name else task
                for task in job.tasks
            ),
        )
        for job in cluster.jobs
    ]
    session = Session.open(replace(cluster, jobs=tuple(jobs)), now_s)
    candidates = ranked_candidates(session, session.snapshot.task_of(name))
    mine = next((c for c in candidates if c["node"] == node), None)
    others = [c for c in candidates if c["node"] != node]
    runner_up = others[0] if others else None
    record: dict[str, Any] = {"node": node, "computed": "now", "scores": mine, "runner_up": runner_up}
    if mine is not None and runner_up is not None and "ranked_by" not in mine:
        record["margin"] = round(float(mine["total"]) - float(runner_up["total"]), 3)
    if mine is None:
        record["note"] = f"{node} would not be chosen again now (it no longer passes the filters or ranks)"
    return record


def _explain(cluster: Cluster, name: str, now_s: float) -> Explanation:
    """Pure (runs in a worker thread): the cluster was built on the event loop."""
    session = Session.open(cluster, now_s)
    return explain(session.engine, session.snapshot.task_of(name))
