"""A job's own fields (queue, priority, preemptible, gang size, profile): which spec they come from and
how they become a ``core.model.Job``. The one home of these rules; the scheduler builds its jobs here.

A replica belongs to a job, ``<deployment>/<service>`` or a Job's name (``task_model.job_name_of``).
The job's own fields are read from one spec, its *level*:

* a Deployment's replica: the deployment's current spec of that service, so a rollout's new priority
  or queue applies to the replicas still running the old version too;
* a Job's replica: the Job's spec;
* when the owner is not stored (deleted while its replicas stop) or no longer lists the service: the
  newest replica's spec, which carries the same fields (a replica's spec is its resolved service or
  task spec, and a Job's replicas carry ``min_available``).

Every level says whose it is (``owner_kind``): a service and a Job differ in their gang size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from loadmaster.core.model import DEFAULT_JOB_PRIORITY, DEFAULT_QUEUE, Job, Task, is_preemptible_by_default
from loadmaster.core.resources import GPU
from loadmaster.manifests.kind_names import DEPLOYMENT, JOB
from loadmaster.manifests.manifest import Manifest

# A service's placement mode -> the placement profile of its job: ``spread`` -> ``service_spread`` (fewest
# replicas of the service, then rendezvous hashing: even, and a node joining moves nothing), ``pack`` ->
# ``service_pack`` (fewest replicas of any service, JACO C3); ``hosts`` and ``global`` pin each replica to
# a host instead, so the config's profile applies.
PLACEMENT_PROFILES: dict[str, str | None] = {
    "spread": "service_spread",
    "pack": "service_pack",
    "hosts": None,
    "global": None,
}
# Work that requests GPUs and is not pinned (a Job, a ``spread`` or ``pack`` service) is placed with this
# profile: on GPU clusters the generic ones strand GPUs (bench/placement.py: on the openb trace
# ``default`` allocates 88.6 % of the GPUs, ``gpu_pack`` 95.5 %). ``spread`` is the manifests' default
# and a stored service no longer says whether it was asked for; a GPU service that wants its replicas
# apart says so with ``topology_spread_constraints``, which ``gpu_pack`` honours (docs/decisions.md).
GPU_PROFILE = "gpu_pack"


def service_position(services: Sequence[Mapping[str, Any]], service: str | None) -> int | None:
    """Where ``service`` stands in a deployment's ``services`` list, or None if it is not listed."""
    for position, spec in enumerate(services):
        if spec.get("name") == service:
            return position
    return None


def find_service(deployment: Manifest, service: str) -> dict[str, Any]:
    """The spec of one service of a deployment; a ValueError if it has no such service."""
    services = deployment.spec.get("services", [])
    position = service_position(services, service)
    if position is None:
        raise ValueError(f'{deployment.ref}: no service "{service}"')
    found: dict[str, Any] = services[position]
    return found


def service_level(service_spec: Mapping[str, Any]) -> dict[str, Any]:
    """The level of a deployment's service: its spec, marked as a service's."""
    return {**service_spec, "owner_kind": DEPLOYMENT}


def job_owner_level(job_spec: Mapping[str, Any]) -> dict[str, Any]:
    """The level of a Job: its spec, marked as a Job's."""
    return {**job_spec, "owner_kind": JOB}


def job_level(
    replica_spec: Mapping[str, Any], owner_spec: Mapping[str, Any] | None
) -> tuple[dict[str, Any], int]:
    """The level of the job of a replica whose spec is ``replica_spec`` (the newest of the job), given its
    owner's stored spec (None when the owner is not stored); and the job's position among its owner's
    jobs: a service's index in its deployment, so a deployment's jobs come in service order (0 for a
    Job; after every listed service for a service no longer listed)."""
    if owner_spec is None:
        return dict(replica_spec), 0
    if replica_spec.get("owner_kind") != DEPLOYMENT:
        return job_owner_level(owner_spec), 0
    services = owner_spec.get("services", [])
    position = service_position(services, replica_spec.get("service"))
    if position is None:
        return dict(replica_spec), len(services)
    return service_level(services[position]), position


def queue_of(level: Mapping[str, Any]) -> str:
    return str(level.get("queue", DEFAULT_QUEUE))


def min_available_of(level: Mapping[str, Any], task_count: int) -> int:
    """The gang size, within 1..task_count. A ``hosts`` service is one gang of all its replicas (JACO C4);
    any other service places its replicas one by one (1); a Job's own ``min_available`` (default: all
    its tasks)."""
    if level.get("owner_kind") == DEPLOYMENT:
        wanted = int(level.get("replicas", task_count)) if level.get("placement") == "hosts" else 1
    else:
        wanted = int(level.get("min_available", task_count))
    return gang_size(wanted, task_count)


def gang_size(wanted: int, task_count: int) -> int:
    """A gang asks for ``wanted`` of its ``task_count`` tasks: at least 1, at most all of them."""
    return max(1, min(wanted, task_count))


def job_from_level(name: str, level: Mapping[str, Any], tasks: Sequence[Task]) -> Job:
    """The core job of a service or Job named ``name``, with ``tasks``: its own fields from ``level``.

    Defaults: queue ``default``, priority 50, preemptible when priority < 100 (KAI's rule), the
    placement mode's profile (else the config's).
    """
    priority = int(level.get("priority", DEFAULT_JOB_PRIORITY))
    placement = level.get("placement")
    return Job(
        name=name,
        tasks=tuple(tasks),
        queue=queue_of(level),
        priority=priority,
        preemptible=bool(level.get("preemptible", is_preemptible_by_default(priority))),
        min_available=min_available_of(level, len(tasks)),
        profile=profile_of(placement, tasks, level.get("profile")),
    )


def profile_of(placement: object, tasks: Sequence[Task], chosen: object = None) -> str | None:
    """The profile of a job: the one its spec (or its queue) names, else ``gpu_pack`` for GPU work that is
    not pinned, else its placement mode's (None: the server's ``scheduler.profile``)."""
    if placement in ("hosts", "global"):
        return None  # pinned: the profile has nothing to choose
    if isinstance(chosen, str):
        return chosen
    if any(task.request.get(GPU, 0) > 0 for task in tasks):
        return GPU_PROFILE
    return PLACEMENT_PROFILES.get(str(placement)) if placement else None
