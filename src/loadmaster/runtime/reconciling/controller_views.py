"""Cached objects -> the controllers' views (``controllers/views.py``), each built once per revision.

The spec hashes the views carry are also what ``change_writes`` stamps on new replicas, so both take
them from ``SPEC_HASHES``: a job's hash is computed once per stored revision, not once to compare and
once more to create.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime
from typing import Any

from loadmaster.controllers.views import (
    DeploymentView,
    DrainView,
    JobView,
    NodeView,
    ReplicaView,
    ServiceView,
)
from loadmaster.core.limits import MAX_INTEGER, short_text
from loadmaster.manifests import Manifest
from loadmaster.manifests.replica_specs import job_spec_hash, service_spec_hash
from loadmaster.manifests.replicas import incarnation_of
from loadmaster.manifests.timestamps import parse_timestamp
from loadmaster.runtime.plane.object_cache import Cached
from loadmaster.runtime.plane.phase_condition import phase_condition_of

# Comfortably more hashes than one pass computes between building a view and writing the replicas it
# asked for, unless a pass handles thousands of new owners at once (then a miss recomputes the hash).
SPEC_HASH_CAPACITY = 4096


class SpecHashes:
    """The spec_hash of each cached Job, and of each service of each cached Deployment, once per revision.

    Keyed by the identity of the cached object's dict: the object cache decodes a new dict for every
    revision and never edits one, so the dict stands for (object, revision), in any store. An entry
    holds its dict, so no other dict can take its id while the entry lives. The oldest entries are
    dropped past ``capacity``.
    """

    def __init__(self, capacity: int = SPEC_HASH_CAPACITY) -> None:
        self._capacity = capacity
        self._hashes: OrderedDict[tuple[int, str], tuple[dict[str, Any], str]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._hashes)

    def job(self, cached: Cached) -> str:
        """What every replica of this job at this revision carries (``job_spec_hash``)."""
        return self._get(cached, "", lambda: job_spec_hash(Manifest.from_stored(cached.obj)))

    def service(self, cached: Cached, service: str) -> str:
        """What every replica of ``service`` of this deployment at this revision carries."""
        return self._get(
            cached, service, lambda: service_spec_hash(Manifest.from_stored(cached.obj), service)
        )

    def _get(self, cached: Cached, part: str, compute: Callable[[], str]) -> str:
        key = (id(cached.obj), part)
        hit = self._hashes.get(key)
        if hit is not None and hit[0] is cached.obj:
            return hit[1]
        value = compute()
        self._hashes[key] = (cached.obj, value)
        if len(self._hashes) > self._capacity:
            self._hashes.popitem(last=False)
        return value


SPEC_HASHES = SpecHashes()


class ViewCache:
    """Views keyed by (kind, name) and remembered with the revision they were built from."""

    def __init__(self) -> None:
        self._views: dict[tuple[str, str], tuple[int, Any]] = {}

    def forget(self, kind: str, name: str) -> None:
        self._views.pop((kind, name), None)

    def _get(self, cached: Cached, build: Any) -> Any:
        key = (cached.kind, cached.name)
        hit = self._views.get(key)
        if hit is not None and hit[0] == cached.mod_revision:
            return hit[1]
        view = build(cached)
        self._views[key] = (cached.mod_revision, view)
        return view

    def replica(self, cached: Cached) -> ReplicaView:
        view: ReplicaView = self._get(cached, replica_view)
        return view

    def deployment(self, cached: Cached) -> DeploymentView:
        view: DeploymentView = self._get(cached, deployment_view)
        return view

    def job(self, cached: Cached) -> JobView:
        view: JobView = self._get(cached, job_view)
        return view

    def node(self, cached: Cached) -> NodeView:
        view: NodeView = self._get(cached, node_view)
        return view


def replica_view(cached: Cached) -> ReplicaView:
    spec, status = cached.obj.get("spec", {}), cached.obj.get("status", {})
    return ReplicaView(
        name=cached.name,
        owner_kind=str(spec.get("owner_kind", "")),
        owner=str(spec.get("owner", "")),
        service=spec.get("service"),
        index=spec.get("index"),
        host=spec.get("host"),
        spec_hash=str(spec.get("spec_hash", "")),
        phase=str(status.get("phase", "Pending")),
        node_ref=status.get("node_ref"),
        revision=cached.mod_revision,
        incarnation=incarnation_of(cached.obj),
        replaces=spec.get("replaces"),
        replacement_reason=spec.get("replacement_reason"),
        replacement_deadline=_moment(spec.get("replacement_deadline")),
        healthy=status.get("health") != "degraded",
        phase_reason=(phase_condition_of(status) or {}).get("reason"),
    )


def _moment(value: Any) -> datetime | None:
    return parse_timestamp(value) if value else None


def deployment_view(cached: Cached) -> DeploymentView:
    """Each service with the spec_hash its replicas carry (the one ``change_writes`` stamps on them, so
    the controller compares like with like)."""
    services = []
    for service in (cached.obj.get("spec") or {}).get("services", []):
        name = service["name"]
        placement = str(service.get("placement", "spread"))
        replicas = _count(service.get("replicas", 0), f"services[{name}].replicas")
        services.append(ServiceView(name, placement, replicas, SPEC_HASHES.service(cached, name)))
    return DeploymentView(cached.name, tuple(services))


def _count(value: Any, field: str) -> int:
    """A stored replica count; one above what admission ever accepted (a stored object from before the
    bounds) raises, so the loop isolates its owner instead of creating replicas without end."""
    count = int(value)  # a stored value: int() says whether it is a count
    if not 0 <= count <= MAX_INTEGER:
        raise ValueError(f"{field}: {short_text(count)} is outside 0..{MAX_INTEGER}")
    return count


def job_view(cached: Cached) -> JobView:
    tasks = _count((cached.obj.get("spec") or {}).get("tasks", 0), "tasks")
    return JobView(cached.name, tasks, SPEC_HASHES.job(cached) if tasks > 0 else "")


def node_view(cached: Cached) -> NodeView:
    status: dict[str, Any] = cached.obj.get("status", {})
    heartbeat = status.get("last_heartbeat")
    return NodeView(
        name=cached.name,
        state=status.get("state"),
        last_heartbeat=parse_timestamp(heartbeat) if heartbeat else None,
        unschedulable=bool(cached.obj.get("spec", {}).get("unschedulable", False)),
        revision=cached.mod_revision,
        drain=_drain(status.get("drain"), status.get("conditions") or []),
    )


def _drain(drain: Any, conditions: list[dict[str, Any]]) -> DrainView | None:
    if not isinstance(drain, dict):
        return None
    started, deadline = parse_timestamp(drain["started_at"]), parse_timestamp(drain["deadline"])
    message = next((str(c.get("message", "")) for c in conditions if c.get("type") == "Drain"), "")
    return DrainView(str(drain["state"]), started, deadline, message)
