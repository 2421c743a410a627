"""``POST /api/scheduling/preview``: a dry run of the real engine on a copy of the current cluster.

The previewed Deployments and Jobs become replicas exactly as the controllers would create them
(next counter indices, one per Ready node for global services) and join the cluster the scheduler
would build now, in place of the same owners' current replicas (a preview of a change shows the new
version), with every other Pending replica left out (they are not what is being asked about).
Then, for each previewed replica:

* ``node``: where a full cycle (every action, in order) would put it, or null;
* ``candidates``: the feasible nodes ranked by the profile's total, as seen before anything of the
  preview is placed, with each scorer's weighted contribution to the total;
* ``rejections``: the explanation (``summary``, ``nodes``) of the nodes that cannot take it;
* ``forecast``: the utilisation of the chosen node once the whole preview is placed;
* ``depends_on`` (when any): the running replicas the cycle would evict or move off the chosen node to
  make room, each ``{replica, kind: evict | move, action, from, to}`` (``to``: a move's destination).
  With the leader's move ledger the dry run obeys the same cooldowns and caps as the real cycle.

Nothing is stored: the cluster is built from memory and the engine works on its own snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np

from loadmaster.core.model import Cluster, Job, Node, Queue, TaskStatus
from loadmaster.core.resources import CPU, GPU, MEMORY
from loadmaster.core.voluntary_moves import VoluntaryMoves
from loadmaster.cycle import TaskOutcome, run_cycle
from loadmaster.manifests import JOB, Manifest, job_replica, service_replica, task_from_replica
from loadmaster.manifests.job_spec import gang_size, job_owner_level, service_level
from loadmaster.manifests.task_model import service_job_name
from loadmaster.placement.diagnosis import explain
from loadmaster.runtime.plane.object_cache import ObjectCache
from loadmaster.runtime.scheduling.scheduling_model import SchedulingModel
from loadmaster.runtime.scheduling.service_jobs import jobs_for, pin_hosts
from loadmaster.session import Session

MAX_CANDIDATES = 10
_FORECAST_RESOURCES = (CPU, MEMORY, GPU)


def _preview_jobs(manifests: Sequence[Manifest], cache: ObjectCache, nodes: dict[str, Node]) -> list[Job]:
    ready_hosts = [n.name for n in nodes.values() if n.state == "Ready" and not n.unschedulable]
    jobs: list[Job] = []
    for manifest in manifests:
        if manifest.kind == JOB:
            replicas = [job_replica(manifest, i) for i in range(int(manifest.spec.get("tasks", 0)))]
            tasks = [task_from_replica(r) for r in replicas]
            jobs.extend(jobs_for(manifest.name, job_owner_level(manifest.spec), [], tasks))
            continue
        for service in manifest.spec.get("services", []):
            name = service["name"]
            if service.get("placement") == "global":
                replicas = [service_replica(manifest, name, host=host) for host in ready_hosts]
            else:
                start = cache.counters.get((manifest.name, name), (0, 0))[0]
                count = int(service.get("replicas", 1))
                replicas = [service_replica(manifest, name, index=start + i) for i in range(count)]
            tasks = [task_from_replica(r) for r in replicas]
            level = service_level(service)
            if service.get("placement") == "hosts":
                tasks = pin_hosts(level, [], tasks, nodes)
            jobs.extend(jobs_for(service_job_name(manifest.name, name), level, [], tasks))
    return jobs


def _running_only(job: Job) -> Job | None:
    tasks = tuple(task for task in job.tasks if task.status != TaskStatus.PENDING)
    if not tasks:
        return None
    return replace(job, tasks=tasks, min_available=gang_size(job.min_available, len(tasks)))


@dataclass(frozen=True, slots=True)
class PreviewInput:
    cluster: Cluster
    jobs: tuple[Job, ...]  # the previewed ones (also in the cluster)
    known_queues: frozenset[str]


def prepare_preview(
    manifests: Sequence[Manifest],
    model: SchedulingModel,
    cache: ObjectCache,
    now: datetime,
    voluntary_moves: VoluntaryMoves | None = None,
) -> PreviewInput:
    """The cluster to dry-run (built on the event loop, from the live cache)."""
    build = model.build(now)
    nodes = build.cluster.nodes
    new_jobs = _preview_jobs(manifests, cache, build.nodes)
    replaced = {job.name for job in new_jobs}  # a previewed owner's current replicas make way
    kept = [
        j for job in build.cluster.jobs if job.name not in replaced and (j := _running_only(job)) is not None
    ]
    known = frozenset(q.name for q in build.cluster.queues) | {"default"}
    extra_queues = tuple(Queue(q) for q in sorted({j.queue for j in new_jobs} - known))
    config = replace(build.cluster.config, voluntary_moves=voluntary_moves)
    cluster = Cluster(nodes, (*kept, *new_jobs), (*build.cluster.queues, *extra_queues), config)
    return PreviewInput(cluster, tuple(new_jobs), known)


def evaluate_preview(preview: PreviewInput, now_s: float) -> list[dict[str, Any]]:
    """Run the engine on the prepared cluster (pure: safe in a worker thread)."""
    cluster = preview.cluster
    plan = run_cycle(cluster, now_s)
    session = Session.open(cluster, now_s)
    usage = _usage_after(cluster, plan.tasks)
    items = []
    for job in preview.jobs:
        for task in job.tasks:
            t = session.snapshot.task_of(task.name)
            node = plan.tasks[task.name].node if task.name in plan.tasks else None
            explanation = explain(session.engine, t)
            rejections: dict[str, Any] = {"summary": explanation.summary, "nodes": explanation.nodes}
            if explanation.hints:
                rejections["hints"] = explanation.hints
            item: dict[str, Any] = {
                "replica": task.name,
                "node": node,
                "candidates": _candidates(session, t),
                "rejections": rejections,
                "forecast": {node: usage[node]} if node is not None else {},
            }
            if job.queue not in preview.known_queues:
                item["warning"] = (
                    f"queue {job.queue} does not exist; the replica would wait until it is applied"
                )
            depends_on = [
                {"replica": d.task, "kind": d.kind, "action": d.action, "from": d.from_node or d.node}
                | ({"to": d.node} if d.kind == "move" else {})
                for d in plan.decisions
                if d.kind in ("evict", "move") and node is not None and (d.from_node or d.node) == node
            ]
            if depends_on:
                item["depends_on"] = depends_on
            if task.name in plan.explanations and plan.explanations[task.name].reason:
                item["reason"] = plan.explanations[task.name].reason
            items.append(item)
    return items


def _candidates(session: Session, t: int) -> list[dict[str, Any]]:
    engine, snapshot = session.engine, session.snapshot
    ctx = engine.context(t)
    feasible = engine.feasible(ctx)
    if not feasible.any():
        return []
    scores = engine.scores(ctx, feasible)
    totals = engine.total(ctx, feasible)
    denominator = engine.profile_of(t).denominator
    order = sorted(np.flatnonzero(feasible).tolist(), key=lambda n: (-int(totals[n]), n))[:MAX_CANDIDATES]
    return [
        {
            "node": snapshot.node_names[n],
            "total": int(totals[n]),
            "scores": {
                name: round(weight * int(values[n]) / denominator, 3) for name, weight, values in scores
            },
        }
        for n in order
    ]


def _usage_after(cluster: Cluster, outcomes: Mapping[str, TaskOutcome]) -> dict[str, dict[str, float]]:
    """Per node, requested / allocatable of cpu, memory and GPU once the plan is applied."""
    used: dict[str, dict[str, int]] = {node.name: {} for node in cluster.nodes}
    gone = (TaskStatus.PENDING.value, TaskStatus.EVICTED.value)
    for job in cluster.jobs:
        for task in job.tasks:
            outcome = outcomes.get(task.name)
            where = outcome.node if outcome is not None else None
            if outcome is None or outcome.status in gone or where is None or where not in used:
                continue
            for resource, amount in task.request.items():
                used[where][resource] = used[where].get(resource, 0) + amount
    return {
        node.name: {
            r: round(used[node.name].get(r, 0) / node.allocatable[r], 4)
            for r in _FORECAST_RESOURCES
            if node.allocatable.get(r)
        }
        for node in cluster.nodes
    }
