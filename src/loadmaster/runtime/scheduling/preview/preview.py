"""``POST /api/scheduling/preview``: a dry run of the real engine on a copy of the current cluster.

The previewed Deployments and Jobs become replicas exactly as the controllers' next pass would leave
them (``preview_services.py``: kept, replaced make-before-break or rolled one step, scaled, one per Ready
node for global services) and join the cluster the scheduler would build now, in place of the same
owners' current replicas, with every other Pending replica left out (they are not what is being asked
about).
Then, for each previewed replica:

* ``node``: where a full cycle (every action, in order) would put it, or null;
* ``candidates``: the feasible nodes ranked by the profile's total, as seen before anything of the
  preview is placed, with each scorer's weighted contribution to the total;
* ``rejections``: the explanation (``summary``, ``nodes``) of the nodes that cannot take it;
* ``forecast``: the utilisation of the chosen node once the whole preview is placed;
* ``scale_up``: the verdict the scheduler's scale-up path would give (``scale_up_verdict.py``): fits
  now, fits after scale-up with template T, or infeasible.
* ``depends_on`` (when any): the running replicas the cycle would evict or move off the chosen node to
  make room, each ``{replica, kind: evict | move, action, from, to?, queue, why}``
  (``preview_victims.py``). With the leader's move ledger the dry run obeys the same cooldowns and caps
  as the real cycle.
* ``pipelined`` (when true): the replica is not bound at once but waits on its node until the victims
  there are gone (the cycle writes it Pending with a ``Pipelined`` condition naming the node).

Beside the items, ``victims`` and ``moves`` list every eviction and move the cycle would make, whichever
replica (of any kind: a service, a global service, a Job's gang) they make room for.

Nothing is stored: the cluster is built from memory and the engine works on its own snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np

from loadmaster.core.model import Cluster, Job, Node, Queue, Task, TaskStatus
from loadmaster.core.resources import CPU, GPU, MEMORY
from loadmaster.core.voluntary_moves import VoluntaryMoves
from loadmaster.cycle import TaskOutcome, run_cycle
from loadmaster.manifests import (
    JOB,
    Manifest,
    WorkerTemplate,
    job_replica,
    task_from_replica,
)
from loadmaster.manifests.model.job_spec import gang_size, job_owner_level, service_level
from loadmaster.manifests.model.task_model import service_job_name
from loadmaster.placement.diagnosis import explain
from loadmaster.placement.extension_points import BoolArray, IntArray
from loadmaster.runtime.plane.object_cache import ObjectCache
from loadmaster.runtime.scheduling.model.scheduling_model import SchedulingModel
from loadmaster.runtime.scheduling.model.service_jobs import jobs_for, pin_hosts
from loadmaster.runtime.scheduling.preview.preview_services import (
    DeploymentRoll,
    global_service_after_apply,
    indexed_service_after_apply,
    replacement_in_flight,
)
from loadmaster.runtime.scheduling.preview.preview_victims import disruptions, making_room_on, queues_by_task
from loadmaster.runtime.scheduling.scale_up.scale_up_verdict import fits_now, is_unplaceable, verdicts
from loadmaster.session import Session

MAX_CANDIDATES = 10
_FORECAST_RESOURCES = (CPU, MEMORY, GPU)


def _preview_jobs(
    manifests: Sequence[Manifest], cache: ObjectCache, nodes: dict[str, Node]
) -> tuple[list[list[Job]], set[str]]:
    """The previewed owners' jobs as the controllers' next pass leaves them (``preview_services.py``),
    one list per manifest, and the names of their replicas that hold a node while they stop (in the
    jobs, not previewed)."""
    ready_hosts = [n.name for n in nodes.values() if n.state == "Ready"]  # cordoned ones too (global)
    groups: list[list[Job]] = []
    stopping: set[str] = set()
    for manifest in manifests:
        jobs: list[Job] = []
        groups.append(jobs)
        if manifest.kind == JOB:
            replicas = [job_replica(manifest, i) for i in range(int(manifest.spec.get("tasks", 0)))]
            tasks = [task_from_replica(r) for r in replicas]
            jobs.extend(jobs_for(manifest.name, job_owner_level(manifest.spec), [], tasks))
            continue
        roll = DeploymentRoll(busy=replacement_in_flight(cache, manifest.name))
        for service in manifest.spec.get("services", []):
            if service.get("placement") == "global":
                after = global_service_after_apply(manifest, service, cache, ready_hosts)
            else:
                after = indexed_service_after_apply(manifest, service, cache, roll)
            stopping.update(task.name for task in after.stopping)
            level = service_level(service)
            waiting = after.pending()
            if service.get("placement") == "hosts":
                waiting = pin_hosts(level, after.holding(), waiting, nodes)
            key = service_job_name(manifest.name, service["name"])
            jobs.extend(jobs_for(key, level, after.holding(), waiting))
    return groups, stopping


def _in_age_order(current: Sequence[Job], groups: list[list[Job]]) -> list[Job]:
    """The cluster's jobs with each previewed owner's jobs (a group) where the scheduling model puts
    them: in place of the owner's current jobs, since a job's place is its owner's age (an apply keeps
    the owner), or last for an owner not stored yet (the youngest). The engine's choices follow the job
    order, so the preview must see the order the cycle after an apply sees. Current jobs of other owners
    keep only their placed replicas (their Pending ones are not what is asked about)."""
    group_of = {job.name: g for g, group in enumerate(groups) for job in group}
    placed: set[int] = set()
    jobs: list[Job] = []
    for job in current:
        g = group_of.get(job.name)
        if g is None:
            if (running := _running_only(job)) is not None:
                jobs.append(running)
        elif g not in placed:
            placed.add(g)
            jobs.extend(groups[g])
    jobs.extend(job for g, group in enumerate(groups) if g not in placed for job in group)
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
    templates: tuple[WorkerTemplate, ...] = ()
    stopping: frozenset[str] = frozenset()  # replicas of the previewed jobs that stop (not previewed)


def prepare_preview(
    manifests: Sequence[Manifest],
    model: SchedulingModel,
    cache: ObjectCache,
    now: datetime,
    voluntary_moves: VoluntaryMoves | None = None,
) -> PreviewInput:
    """The cluster to dry-run (built in a worker thread, in ``model.frozen()``)."""
    build = model.build(now)
    nodes = build.cluster.nodes
    groups, stopping = _preview_jobs(manifests, cache, build.nodes)
    new_jobs = [job for group in groups for job in group]
    known = frozenset(q.name for q in build.cluster.queues) | {"default"}
    extra_queues = tuple(Queue(q) for q in sorted({j.queue for j in new_jobs} - known))
    config = replace(build.cluster.config, voluntary_moves=voluntary_moves)
    jobs = _in_age_order(build.cluster.jobs, groups)
    cluster = Cluster(nodes, tuple(jobs), (*build.cluster.queues, *extra_queues), config)
    return PreviewInput(cluster, tuple(new_jobs), known, tuple(build.templates), frozenset(stopping))


def evaluate_preview(preview: PreviewInput, now_s: float) -> dict[str, list[dict[str, Any]]]:
    """Run the engine on the prepared cluster (pure: safe in a worker thread): ``{items, victims, moves}``."""
    cluster = preview.cluster
    plan = run_cycle(cluster, now_s)
    disrupted = disruptions(plan.decisions, queues_by_task(cluster))
    session = Session.open(cluster, now_s)
    usage = _usage_after(cluster, plan.tasks)
    items = []
    unplaceable: list[tuple[dict[str, Any], Task]] = []
    for job in preview.jobs:
        for task in job.tasks:
            if task.name in preview.stopping:
                continue
            if task.status != TaskStatus.PENDING:  # an unchanged replica that keeps its node
                items.append({"replica": task.name, "node": task.node, "stays": True})
                continue
            t = session.snapshot.task_of(task.name)
            node = plan.tasks[task.name].node if task.name in plan.tasks else None
            explanation = explain(session.engine, t)
            rejections: dict[str, Any] = {"summary": explanation.summary, "nodes": explanation.nodes}
            if explanation.hints:
                rejections["hints"] = explanation.hints
            item: dict[str, Any] = {
                "replica": task.name,
                "node": node,
                "candidates": ranked_candidates(session, t),
                "rejections": rejections,
                "forecast": {node: usage[node]} if node is not None else {},
            }
            if job.queue not in preview.known_queues:
                item["warning"] = (
                    f"queue {job.queue} does not exist; the replica would wait until it is applied"
                )
            if depends_on := making_room_on(disrupted, node):
                item["depends_on"] = depends_on
            if task.name in plan.tasks and plan.tasks[task.name].status == TaskStatus.PIPELINED.value:
                item["pipelined"] = True
            if task.name in plan.explanations and plan.explanations[task.name].reason:
                item["reason"] = plan.explanations[task.name].reason
            item["scale_up"] = fits_now()
            if is_unplaceable(explanation, len(cluster.nodes), "hosts" if task.hosts else None):
                unplaceable.append((item, task))
            items.append(item)
    found = verdicts([task for _, task in unplaceable], preview.templates, cluster.config)
    for (item, _), verdict in zip(unplaceable, found, strict=True):
        item["scale_up"] = verdict
    return {
        "items": items,
        "victims": [entry for entry in disrupted if entry["kind"] == "evict"],
        "moves": [entry for entry in disrupted if entry["kind"] == "move"],
    }


def _rank(values: IntArray, feasible: BoolArray, n: int) -> int:
    """1 + how many feasible nodes beat node ``n`` on an order key (1 = the one it would pick)."""
    return 1 + int(np.count_nonzero(feasible & (values > values[n])))


def ranked_candidates(session: Session, t: int, limit: int = MAX_CANDIDATES) -> list[dict[str, Any]]:
    """The feasible nodes, best first, with each scorer's weighted part of the 0..100 total. An order
    scorer (``rendezvous``: a hash, not a score) is shown as the node's rank by it, and so is the total
    of a profile made of one (``ranked_by`` names them)."""
    engine, snapshot = session.engine, session.snapshot
    ctx = engine.context(t)
    feasible = engine.feasible(ctx)
    if not feasible.any():
        return []
    profile = engine.profile_of(t)
    order_keys = {scorer.name for scorer, _ in profile.scorers if scorer.lexicographic}
    scores = engine.scores(ctx, feasible)
    totals = engine.total(ctx, feasible)
    # Profiles' weights need not add up to 1 (gpu_pack's add up to 2): every part is divided by their
    # sum, so that the parts add up to a total between 0 and 100 whatever the profile.
    weight_sum = sum(weight for _, weight, _ in scores) or 1
    order = sorted(np.flatnonzero(feasible).tolist(), key=lambda n: (-int(totals[n]), n))[:limit]
    ranked_total = any(name in order_keys for name, _, _ in scores)
    candidates = []
    for n in order:
        shown: dict[str, Any] = {}
        for name, weight, values in scores:
            shown[name] = (
                _rank(values, feasible, n)
                if name in order_keys
                else round(weight * int(values[n]) / weight_sum, 3)
            )
        candidate: dict[str, Any] = {
            "node": snapshot.node_names[n],
            "total": _rank(totals, feasible, n)
            if ranked_total
            else round(int(totals[n]) * profile.denominator / weight_sum, 3),
            "scores": shown,
        }
        if ranked_total:
            candidate["ranked_by"] = sorted(order_keys)
        candidates.append(candidate)
    return candidates


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
