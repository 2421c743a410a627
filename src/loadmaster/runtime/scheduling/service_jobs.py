"""Per-service placement modes -> core jobs (the control plane's view of a service or a Job).

``spread`` -> the ``rendezvous`` profile (a node joining moves nothing), ``pack`` -> ``default`` (the
config's binpack strategy), ``hosts`` -> each replica pinned to one listed host and the service one gang,
``global`` -> each replica pinned to its own host (the replica's spec says which).

Work that requests GPUs is placed with ``gpu_pack`` instead (GPU_PROFILE): a Job, and a ``spread`` or
``pack`` service. On GPU clusters the generic profiles strand GPUs (bench/placement.py: on the openb
trace ``default`` allocates 88.6 % of the GPUs, ``gpu_pack`` 95.7 %). ``spread`` is the
manifests' default and a stored service no longer says whether it was asked for; a GPU service that
wants its replicas apart says so with ``topology_spread_constraints``, which ``gpu_pack`` honours.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from loadmaster.core.model import (
    DEFAULT_JOB_PRIORITY,
    DEFAULT_QUEUE,
    PREEMPTIBLE_BELOW_PRIORITY,
    Job,
    Node,
    Task,
)
from loadmaster.core.resources import GPU
from loadmaster.manifests import DEPLOYMENT

PLACEMENT_PROFILES: dict[str, str | None] = {
    "spread": "rendezvous",
    "pack": "default",
    "hosts": None,
    "global": None,
}
GPU_PROFILE = "gpu_pack"


def pin_hosts(
    spec: dict[str, Any], holding: list[Task], waiting: list[Task], nodes: dict[str, Node]
) -> list[Task]:
    """``placement: hosts`` runs at most one replica per listed host (manifests: "at most one replica
    each"). Hosts already holding a replica of the service are taken; the waiting replicas, oldest
    first, are each pinned to one free host: Ready, uncordoned hosts first, then by name. A replica
    left without a host cannot be placed, and since the service is one gang, neither can the others.
    """
    taken = {task.node for task in holding}
    listed = [host for host in spec.get("hosts", []) if host not in taken]

    def usable(host: str) -> bool:
        return host in nodes and nodes[host].state == "Ready" and not nodes[host].unschedulable

    free = sorted(listed, key=lambda host: (not usable(host), host))
    return [
        dataclasses.replace(task, hosts=(free[i],) if i < len(free) else ()) for i, task in enumerate(waiting)
    ]


def jobs_for(key: str, level: dict[str, Any], holding: list[Task], waiting: list[Task]) -> list[Job]:
    """The core jobs of a service or Job, from the tasks that hold a node and those waiting for one.

    A gang (a ``hosts`` service, a Job) is one job: all or nothing. A service whose replicas are
    placed one by one (every other mode) is one job of its placed replicas plus one single-task job
    per waiting replica, all named ``<deployment>/<service>``: each waiting replica still gets its own
    node choice, in order, as an elastic job's extras would, but the engine places a run of identical
    single-task jobs in one pass where it would revisit a 10,000-task elastic job once per task.
    """
    tasks = [*holding, *waiting]
    job = job_for(key, level, tasks)
    if level.get("owner_kind") != DEPLOYMENT or job.min_available != 1 or not waiting:
        return [job]
    placed = [job_for(key, level, holding)] if holding else []
    return [*placed, *(dataclasses.replace(job, tasks=(task,)) for task in waiting)]


def job_for(key: str, level: dict[str, Any], tasks: list[Task]) -> Job:
    """The core job of a service or Job: its own fields from ``level`` (the owner's spec)."""
    priority = int(level.get("priority", DEFAULT_JOB_PRIORITY))
    placement = level.get("placement")
    if level.get("owner_kind") == DEPLOYMENT:
        # hosts: all replicas or none (JACO C4); every other service places replicas one by one.
        wanted = int(level.get("replicas", len(tasks))) if placement == "hosts" else 1
        min_available = max(1, min(wanted, len(tasks)))
    else:
        min_available = max(1, min(int(level.get("min_available", len(tasks))), len(tasks)))
    return Job(
        name=key,
        tasks=tuple(tasks),
        queue=str(level.get("queue", DEFAULT_QUEUE)),
        priority=priority,
        preemptible=bool(level.get("preemptible", priority < PREEMPTIBLE_BELOW_PRIORITY)),
        min_available=min_available,
        profile=profile_for(placement, tasks),
    )


def profile_for(placement: object, tasks: list[Task]) -> str | None:
    """The profile of a job: by its placement mode, or ``gpu_pack`` for GPU work that is not pinned."""
    if placement in ("hosts", "global"):
        return None  # pinned: the profile has nothing to choose
    if any(task.request.get(GPU, 0) > 0 for task in tasks):
        return GPU_PROFILE
    return PLACEMENT_PROFILES.get(str(placement)) if placement else None
