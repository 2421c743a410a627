"""A job's replicas -> one ``core.model.Job``, so the control plane can build a ``Cluster``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from loadmaster.core.model import DEFAULT_JOB_PRIORITY, DEFAULT_QUEUE, PREEMPTIBLE_BELOW_PRIORITY, Job
from loadmaster.manifests.kind_names import DEPLOYMENT
from loadmaster.manifests.manifest import Manifest
from loadmaster.manifests.node_model import as_manifest
from loadmaster.manifests.task_model import is_schedulable, job_name_of, service_job_name, task_from_replica


def replica_order(replica: Manifest) -> tuple[int, str]:
    """Oldest first: by counter index (never reused, so creation order), then by name (global ones)."""
    index = replica.spec.get("index")
    return (index if isinstance(index, int) else -1, replica.name)


def find_service(deployment: Manifest, service: str) -> dict[str, Any]:
    for spec in deployment.spec.get("services", []):
        if spec.get("name") == service:
            found: dict[str, Any] = spec
            return found
    raise ValueError(f'{deployment.ref}: no service "{service}"')


def job_from_replicas(
    replicas: Sequence[Manifest | Mapping[str, Any]],
    *,
    owner: Manifest | Mapping[str, Any] | None = None,
    service: str | None = None,
    stale_for_s: float | None = None,
) -> Job:
    """The job of a deployment's service or of a Job, with one task per replica that holds or wants
    resources (finished replicas are left out), oldest first.

    Queue, priority, preemptible and min_available come from ``owner`` (the Deployment or Job
    manifest, whose current spec wins during a rollout), or else from the newest replica. A service
    is not a gang: its min_available is 1. ``service`` is needed only for a Deployment owner whose
    service has no replicas.
    """
    manifests = sorted((as_manifest(r) for r in replicas), key=replica_order)
    name, level = _job_level(manifests, owner, service)
    strangers = [m.name for m in manifests if job_name_of(m.spec) != name]
    if strangers:
        raise ValueError(f"replicas {', '.join(strangers)} do not belong to job {name}")
    priority = level.get("priority", DEFAULT_JOB_PRIORITY)
    return Job(
        name=name,
        tasks=tuple(task_from_replica(m) for m in manifests if is_schedulable(m)),
        queue=level.get("queue", DEFAULT_QUEUE),
        priority=priority,
        preemptible=level.get("preemptible", priority < PREEMPTIBLE_BELOW_PRIORITY),
        min_available=level.get("min_available", 1),
        stale_for_s=stale_for_s,
    )


def _job_level(
    manifests: list[Manifest], owner: Manifest | Mapping[str, Any] | None, service: str | None
) -> tuple[str, Mapping[str, Any]]:
    """The job's name and the spec its job-level fields come from."""
    if owner is None:
        if not manifests:
            raise ValueError("job_from_replicas needs owner= when there are no replicas")
        newest = manifests[-1].spec
        return job_name_of(newest), newest
    owner_manifest = as_manifest(owner)
    if owner_manifest.kind != DEPLOYMENT:
        return owner_manifest.name, owner_manifest.spec
    service = service or (manifests[0].spec.get("service") if manifests else None)
    if service is None:
        raise ValueError(f"{owner_manifest.ref}: say which service (service=) when it has no replicas")
    return service_job_name(owner_manifest.name, service), find_service(owner_manifest, service)
