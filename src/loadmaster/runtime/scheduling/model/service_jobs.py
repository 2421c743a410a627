"""A service or Job -> the core jobs the scheduler places (the control plane's view of it).

A job's own fields and its placement mode's profile come from ``manifests.model.job_spec``; here, how the
modes run: ``hosts`` pins each replica to one listed host (the service is one gang), ``global`` pins
each replica to its own host (the replica's spec says which), and a service placed replica by replica
becomes one job per waiting replica.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from loadmaster.core.model import Job, Node, Task
from loadmaster.manifests import DEPLOYMENT
from loadmaster.manifests.model.job_spec import job_from_level


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
    job = job_from_level(key, level, tasks)
    if level.get("owner_kind") != DEPLOYMENT or job.min_available != 1 or not waiting:
        return [job]
    placed = [job_from_level(key, level, holding)] if holding else []
    return [*placed, *(dataclasses.replace(job, tasks=(task,)) for task in waiting)]
