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
from loadmaster.core.resources import ADDRESSES, ONE_ADDRESS, parse_duration_s
from loadmaster.manifests import Manifest
from loadmaster.manifests.deployment_revisions import revisions_of
from loadmaster.manifests.model.node_model import allocatable_of
from loadmaster.manifests.replica_specs import job_spec_hash, service_spec_hash
from loadmaster.manifests.replicas import incarnation_of
from loadmaster.manifests.timeslots import timeslot_of
from loadmaster.manifests.timestamps import parse_timestamp
from loadmaster.runtime.plane.object_cache import Cached
from loadmaster.runtime.plane.phase_condition import phase_condition_of
from loadmaster.runtime.reconciling.writes.rollout_status import plan_of

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
    """Views keyed by (kind, name) and remembered with the cached copy they were built from (not its
    revision: a heartbeat lease gives a node a new copy at the same revision, object_cache.py)."""

    def __init__(self) -> None:
        self._views: dict[tuple[str, str], tuple[Cached, Any]] = {}

    def forget(self, kind: str, name: str) -> None:
        self._views.pop((kind, name), None)

    def _get(self, cached: Cached, build: Any) -> Any:
        key = (cached.kind, cached.name)
        hit = self._views.get(key)
        if hit is not None and hit[0] is cached:
            return hit[1]
        view = build(cached)
        self._views[key] = (cached, view)
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
        failure="degraded" if status.get("degraded") else "exited" if status.get("exited") else None,
        restart_count=int(status.get("restart_count", 0)),
        restart_budget=spec.get("restart_budget"),
        commands_pending=last_command_id(status) > int(status.get("commands_done", 0)),
        incarnation=incarnation_of(cached.obj),
        replaces=spec.get("replaces"),
        replacement_reason=spec.get("replacement_reason"),
        replacement_deadline=_moment(spec.get("replacement_deadline")),
        # Running and healthy (a rollout step waits for it): not degraded or exited, and its health
        # check not reported failing (replica_reports.py).
        healthy=not (status.get("degraded") or status.get("exited")) and status.get("healthy") is not False,
        phase_reason=(phase_condition_of(status) or {}).get("reason"),
        address_slot=status.get("address_slot"),
    )


def last_command_id(status: dict[str, Any]) -> int:
    """The highest id among the replica's commands (0: none written yet)."""
    commands = status.get("commands") or []
    return max((int(command.get("id", 0)) for command in commands), default=0)


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
        timeout = (service.get("rollout") or {}).get("step_timeout")
        step_timeout_s = parse_duration_s(timeout) if timeout is not None else None
        hashed = SPEC_HASHES.service(cached, name)
        services.append(
            ServiceView(name, placement, replicas, hashed, service.get("node_loss_policy"), step_timeout_s)
        )
    status = cached.obj.get("status") or {}
    return DeploymentView(
        cached.name,
        tuple(services),
        _slot_end(cached),
        applied_revision=_revision_number(status.get("applied_revision")),
        previous_revision=_revision_number(status.get("previous_revision")),
        revision_hashes={
            int(r["revision"]): dict(r.get("spec_hashes") or {})
            for r in revisions_of(status)
            if "revision" in r
        },
        rollout=plan_of(status.get("rollout")),
        revision=cached.mod_revision,
    )


def _revision_number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _count(value: Any, field: str) -> int:
    """A stored replica count; one above what admission ever accepted (a stored object from before the
    bounds) raises, so the loop isolates its owner instead of creating replicas without end."""
    count = int(value)  # a stored value: int() says whether it is a count
    if not 0 <= count <= MAX_INTEGER:
        raise ValueError(f"{field}: {short_text(count)} is outside 0..{MAX_INTEGER}")
    return count


def job_view(cached: Cached) -> JobView:
    tasks = _count((cached.obj.get("spec") or {}).get("tasks", 0), "tasks")
    return JobView(cached.name, tasks, SPEC_HASHES.job(cached) if tasks > 0 else "", _slot_end(cached))


def _slot_end(cached: Cached) -> datetime | None:
    window = timeslot_of(cached.obj.get("spec") or {})
    return None if window is None else window.end


def node_view(cached: Cached) -> NodeView:
    status: dict[str, Any] = cached.obj.get("status", {})
    heartbeat = status.get("last_heartbeat")
    loss = status.get("node_loss") or {}
    address = status.get("probe_address")
    return NodeView(
        name=cached.name,
        state=status.get("state"),
        last_heartbeat=parse_timestamp(heartbeat) if heartbeat else None,
        unschedulable=bool(cached.obj.get("spec", {}).get("unschedulable", False)),
        revision=cached.mod_revision,
        not_ready_at=not_ready_at(status),
        probe=loss.get("probe"),
        probed_at=_time(loss.get("probed_at")),
        lost_at=_time(loss.get("lost_at")),
        probe_address=address if isinstance(address, str) else None,
        drain=_drain(status.get("drain"), status.get("conditions") or []),
        address_pool=_address_pool(cached.obj.get("spec", {}), status),
    )


def _address_pool(spec: dict[str, Any], status: dict[str, Any]) -> int:
    """The node's address pool size: its allocatable ``addresses`` (0: no pool). Only that entry is read,
    so a node with another quantity out of range (the scheduler skips it) is still looked at."""
    pool_of = {ADDRESSES: (status.get("allocatable") or spec.get("capacity") or {}).get(ADDRESSES, 0)}
    reserved = {ADDRESSES: (spec.get("system_reserved") or {}).get(ADDRESSES, 0)}
    if "allocatable" in status:
        reserved = {}
    return (
        allocatable_of({"capacity": pool_of, "system_reserved": reserved}, {}).get(ADDRESSES, 0)
        // ONE_ADDRESS
    )


def not_ready_at(status: dict[str, Any]) -> datetime | None:
    """When a NotReady node's verdict was written: its Ready condition's transition (reason NotReadyAt)."""
    if status.get("state") != "NotReady":
        return None
    for condition in status.get("conditions", []):
        if condition.get("type") == "Ready" and condition.get("reason") == "NotReadyAt":
            return _time(condition.get("last_transition_time"))
    return None


def _time(value: object) -> datetime | None:
    return parse_timestamp(value) if isinstance(value, str) and value else None


def _drain(drain: Any, conditions: list[dict[str, Any]]) -> DrainView | None:
    if not isinstance(drain, dict):
        return None
    started, deadline = parse_timestamp(drain["started_at"]), parse_timestamp(drain["deadline"])
    message = next((str(c.get("message", "")) for c in conditions if c.get("type") == "Drain"), "")
    return DrainView(str(drain["state"]), started, deadline, message)
