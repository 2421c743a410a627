"""Build the Replica objects the server stores for a deployment's service or a job's task.

A replica's ``spec`` is the resolved service (or job task) spec, minus the fields that describe the
set rather than one copy (``name``, ``replicas``; ``tasks``), plus its identity: owner, service,
index or host, the ``spec_hash`` of what it runs and, for jobs, the gang's ``min_available``.
"""

from __future__ import annotations

import copy
from typing import Any

from loadmaster.manifests.job_model import find_service
from loadmaster.manifests.kind_names import DEPLOYMENT, JOB, REPLICA
from loadmaster.manifests.manifest import Manifest
from loadmaster.manifests.replicas import (
    ReplicaPhase,
    global_replica_name,
    job_task_name,
    replica_name,
    spec_hash,
)

_SERVICE_SET_FIELDS = ("name", "replicas")
_JOB_SET_FIELDS = ("tasks", "min_available")


def _require_kind(manifest: Manifest, kind: str) -> None:
    if manifest.kind != kind:
        raise ValueError(f"{manifest.ref} is a {manifest.kind}, not a {kind}")


def _replica(
    name: str, identity: dict[str, Any], template: dict[str, Any], hashed: dict[str, Any]
) -> Manifest:
    spec = {**identity, "spec_hash": spec_hash(hashed), **copy.deepcopy(template)}
    return Manifest(
        kind=REPLICA,
        name=name,
        metadata={"name": name},
        spec=spec,
        status={"phase": ReplicaPhase.PENDING.value},
    )


def service_replica(
    deployment: Manifest, service: str, *, index: int | None = None, host: str | None = None
) -> Manifest:
    """A new Pending replica of ``service``: by ``index`` (from the service's ReplicaCounter), or by
    ``host`` when the service is ``global``."""
    _require_kind(deployment, DEPLOYMENT)
    service_spec = find_service(deployment, service)
    identity: dict[str, Any] = {"owner_kind": DEPLOYMENT, "owner": deployment.name, "service": service}
    if service_spec.get("placement") == "global":
        if host is None or index is not None:
            raise ValueError(f'{deployment.ref}: service "{service}" is global: give host= and no index=')
        identity["host"] = host
        name = global_replica_name(deployment.name, service, host)
    else:
        if index is None or host is not None:
            raise ValueError(f'{deployment.ref}: service "{service}" is not global: give index= and no host=')
        identity["index"] = index
        name = replica_name(deployment.name, service, index)
    template = {k: v for k, v in service_spec.items() if k not in _SERVICE_SET_FIELDS}
    return _replica(name, identity, template, service_spec)


def job_replica(job: Manifest, index: int) -> Manifest:
    """A new Pending replica for task ``index`` of a Job (0 <= index < tasks)."""
    _require_kind(job, JOB)
    tasks = job.spec.get("tasks", 0)
    if not 0 <= index < tasks:
        raise ValueError(f"{job.ref}: task index {index} is outside 0..{tasks - 1}")
    identity: dict[str, Any] = {
        "owner_kind": JOB,
        "owner": job.name,
        "index": index,
        "min_available": job.spec.get("min_available", tasks),
    }
    template = {k: v for k, v in job.spec.items() if k not in _JOB_SET_FIELDS}
    return _replica(job_task_name(job.name, index), identity, template, template)
