"""What a timeline's ``expect`` is judged against: the store's replicas, deployments and nodes, and the
audit events, in the output's shape (``shared/spec/timeline-format.md``, "Output").

A replacement (``X.next``, make-before-break) is folded away: by name, X reports its old incarnation
until the swap, when the replacement's object takes the key X (the spec's "Names"). A replica's
``owner`` is ``<deployment>/<service>`` or the job's name; its ``reason`` is that of its latest
Phase condition. A node's ``reason`` is that of its most recent condition transition. An audit entry
becomes an event with its virtual time and the object it is about as a named field (``replica_id``,
``node``, ``deployment``, ...), then its details.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from loadmaster.manifests import DEPLOYMENT, NODE, REPLICA
from loadmaster.manifests.timestamps import parse_timestamp
from loadmaster.runtime.plane.object_cache import ObjectCache

# The field an event's object goes into, by the object's kind (``replicas/web-0`` -> replica_id: web-0).
_OBJECT_FIELD = {
    "replicas": "replica_id",
    "nodes": "node",
    "deployments": "deployment",
    "jobs": "job",
    "queues": "queue",
    "workertemplates": "worker_template",
}


def seconds_text(seconds: float) -> str:
    """Virtual time as the output writes it: ``125.0s``, ``125.05s`` (to the millisecond)."""
    return f"{round(seconds, 3)}s"


def _owner(spec: Mapping[str, Any]) -> str | None:
    owner = spec.get("owner")
    if spec.get("owner_kind") == DEPLOYMENT:
        return f"{owner}/{spec.get('service')}"
    return owner if isinstance(owner, str) else None


def _phase_reason(status: Mapping[str, Any]) -> str | None:
    phases = [c for c in status.get("conditions", []) if c.get("type") == "Phase"]
    return phases[-1].get("reason") if phases else None


def _latest_reason(status: Mapping[str, Any]) -> str | None:
    conditions = status.get("conditions", [])
    if not conditions:
        return None
    latest = max(enumerate(conditions), key=lambda ic: (str(ic[1].get("last_transition_time", "")), ic[0]))
    reason = latest[1].get("reason")
    return reason if isinstance(reason, str) else None


def observe_replicas(cache: ObjectCache) -> dict[str, dict[str, Any]]:
    replicas = {}
    for name in sorted(cache.objects[REPLICA]):
        obj = cache.objects[REPLICA][name].obj
        spec, status = obj.get("spec", {}), obj.get("status", {})
        if spec.get("replaces"):
            continue
        replicas[name] = {
            "owner": _owner(spec),
            "phase": status.get("phase", "Pending"),
            "node": status.get("node_ref"),
            "image": spec.get("image"),
            "restart_count": status.get("restart_count", 0),
            "reason": _phase_reason(status),
            "previous_node": status.get("previous_node_ref"),
        }
    return replicas


def observe_deployments(cache: ObjectCache) -> dict[str, dict[str, Any]]:
    deployments = {}
    for name in sorted(cache.objects[DEPLOYMENT]):
        status = cache.objects[DEPLOYMENT][name].obj.get("status", {})
        deployments[name] = {"rollout": status.get("rollout"), "pending_reason": status.get("pending_reason")}
    return deployments


def observe_nodes(cache: ObjectCache) -> dict[str, dict[str, Any]]:
    nodes = {}
    for name in sorted(cache.objects[NODE]):
        status = cache.objects[NODE][name].obj.get("status", {})
        nodes[name] = {"state": status.get("state"), "reason": _latest_reason(status)}
    return nodes


def event_of(record: Mapping[str, Any], epoch: datetime) -> dict[str, Any]:
    """One audit record as a timeline event."""
    at = (parse_timestamp(record["time"]) - epoch).total_seconds()
    event: dict[str, Any] = {"at": seconds_text(at), "type": record.get("type")}
    kind, _, name = str(record.get("object", "")).partition("/")
    if name and kind in _OBJECT_FIELD:
        event[_OBJECT_FIELD[kind]] = name
    else:
        event["object"] = record.get("object")
    for key, value in (record.get("details") or {}).items():
        event.setdefault(key, value)
    event["message"] = record.get("message")
    return event
