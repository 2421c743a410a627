"""Build the Replica objects the server stores for a deployment's service or a job's task.

A replica's ``spec`` is the resolved service (or job task) spec, minus the fields that describe the
set rather than one copy (``name``, ``replicas``; ``tasks``), plus its identity: owner, service,
index or host, the ``spec_hash`` of what it runs and, for jobs, the gang's ``min_available``.

The hash is what a controller compares a replica with its owner by, so it is computed once per stored
revision of the owner (``job_spec_hash``, ``service_spec_hash``) and handed to the builders, which
otherwise compute it themselves.
"""

from __future__ import annotations

import copy
from typing import Any

from loadmaster.manifests.kind_names import DEPLOYMENT, JOB, REPLICA
from loadmaster.manifests.manifest import Manifest
from loadmaster.manifests.model.job_spec import find_service
from loadmaster.manifests.replicas import ReplicaPhase, global_replica_name, job_task_name, replica_name
from loadmaster.manifests.replicas import spec_hash as hash_of

_SERVICE_SET_FIELDS = ("name", "replicas", "rollout")
# The job's own fields, not a copy's: a time-slot is the owner's window (manifests/timeslots.py).
_JOB_SET_FIELDS = ("tasks", "min_available", "timeslot")
_IMMUTABLE = frozenset({str, int, float, bool, type(None)})


def _require_kind(manifest: Manifest, kind: str) -> None:
    if manifest.kind != kind:
        raise ValueError(f"{manifest.ref} is a {manifest.kind}, not a {kind}")


def _fresh(value: Any) -> Any:
    """A copy of JSON-shaped data that shares no mutable part with ``value`` (so editing a replica
    never edits its owner's cached manifest). Dicts and lists are rebuilt and immutable scalars kept,
    several times cheaper than ``copy.deepcopy``, which also keeps a memo of every object it met;
    anything else (never in a normalized spec) still goes through ``copy.deepcopy``."""
    kind = type(value)
    if kind is dict:
        return {key: _fresh(item) for key, item in value.items()}
    if kind is list:
        return [_fresh(item) for item in value]
    if kind in _IMMUTABLE:
        return value
    return copy.deepcopy(value)


def replica_labels(owner: Manifest, template: dict[str, Any]) -> dict[str, str]:
    """The labels a replica carries, so ``get replicas -l team=a`` finds a team's replicas: its owner's
    ``metadata.labels``, then the service's (or job task's) own ``labels`` over them. Copied when the
    replica is made (like its spec)."""
    return {**(owner.metadata.get("labels") or {}), **(template.get("labels") or {})}


def _replica(
    name: str, identity: dict[str, Any], template: dict[str, Any], spec_hash: str, labels: dict[str, str]
) -> Manifest:
    spec = {**identity, "spec_hash": spec_hash}
    spec.update((key, _fresh(value)) for key, value in template.items())
    return Manifest(
        kind=REPLICA,
        name=name,
        metadata={"name": name, "labels": labels} if labels else {"name": name},
        spec=spec,
        status={"phase": ReplicaPhase.PENDING.value},
    )


def _job_template(job: Manifest) -> dict[str, Any]:
    return {k: v for k, v in job.spec.items() if k not in _JOB_SET_FIELDS}


def job_spec_hash(job: Manifest) -> str:
    """The ``spec_hash`` every replica of ``job`` carries: of its task template (no copy is made)."""
    _require_kind(job, JOB)
    return hash_of(_job_template(job))


def service_spec_hash(deployment: Manifest, service: str) -> str:
    """The ``spec_hash`` every replica of ``service`` carries: of the service spec, replicas aside."""
    _require_kind(deployment, DEPLOYMENT)
    return hash_of(find_service(deployment, service))


def service_replica(
    deployment: Manifest,
    service: str,
    *,
    index: int | None = None,
    host: str | None = None,
    spec_hash: str | None = None,
) -> Manifest:
    """A new Pending replica of ``service``: by ``index`` (from the service's ReplicaCounter), or by
    ``host`` when the service is ``global``. ``spec_hash``, when the caller has it, must be
    ``service_spec_hash(deployment, service)`` of this same deployment."""
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
    hashed = spec_hash if spec_hash is not None else hash_of(service_spec)
    return _replica(name, identity, template, hashed, replica_labels(deployment, template))


def job_replica(job: Manifest, index: int, *, spec_hash: str | None = None) -> Manifest:
    """A new Pending replica for task ``index`` of a Job (0 <= index < tasks). ``spec_hash``, when the
    caller has it, must be ``job_spec_hash(job)`` of this same job."""
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
    template = _job_template(job)
    hashed = spec_hash if spec_hash is not None else hash_of(template)
    return _replica(job_task_name(job.name, index), identity, template, hashed, replica_labels(job, template))
