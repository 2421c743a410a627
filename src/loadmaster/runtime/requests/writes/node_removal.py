"""``loadmaster node remove N`` / ``POST /api/nodes/{name}/remove``: start a graceful removal (drain).

One write, CAS on the node as read: the node is cordoned, ``status.drain`` records the start, the
deadline (start + ``drain_timeout``) and the replicas to move (the non-global ones placed on it), its
``Drain`` condition says ``Draining``, and ``drain_started`` is audited with it. The leader's drain rule
(``controllers/nodes/drain.py``) does the rest from the store. An unknown node is 404 and a node already
draining 409, each naming the node; a drain that timed out may be started again.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from loadmaster.controllers.views import DRAINING
from loadmaster.manifests import NODE, REPLICA, object_ref
from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.audit import AuditEntry
from loadmaster.runtime.plane.errors import NotFoundError, WriteConflictError
from loadmaster.runtime.reconciling.writes.drain_writes import DRAIN_CONDITION, drain_condition
from loadmaster.runtime.requests.writes.object_update import update_object

MOVABLE_PHASES = ("Scheduled", "Running")


def replicas_to_move(plane: ControlPlane, node: str) -> list[str]:
    """The non-global replicas placed on ``node`` (replacements aside), by name."""
    names = []
    for name, cached in plane.cache.objects[REPLICA].items():
        spec, status = cached.obj.get("spec", {}), cached.obj.get("status", {})
        if status.get("node_ref") != node or status.get("phase") not in MOVABLE_PHASES:
            continue
        if "host" not in spec and not spec.get("replaces"):
            names.append(name)
    return sorted(names)


async def remove_node(plane: ControlPlane, name: str, actor: str) -> dict[str, Any]:
    """The node with its drain started; NotFoundError / WriteConflictError naming the node."""
    if plane.cache.get(NODE, name) is None:
        raise NotFoundError(f"{object_ref(NODE, name)} not found: no node named {name} to remove")
    now = plane.clock.now()
    deadline = now + timedelta(seconds=plane.settings.drain_timeout_s)
    moving = replicas_to_move(plane, name)

    def mutate(node: dict[str, Any]) -> dict[str, Any]:
        status = dict(node.get("status", {}))
        drain = status.get("drain") or {}
        if drain.get("state") == DRAINING:
            raise WriteConflictError(
                f"{object_ref(NODE, name)} is already draining (since {drain.get('started_at')}, "
                f"deadline {drain.get('deadline')})"
            )
        status["drain"] = {
            "state": DRAINING,
            "started_at": format_timestamp(now),
            "deadline": format_timestamp(deadline),
            "replicas": moving,
        }
        message = f"removing node {name}: moving {len(moving)} replica(s) by {format_timestamp(deadline)}"
        kept = [c for c in status.get("conditions", []) if c.get("type") != DRAIN_CONDITION]
        status["conditions"] = [*kept, drain_condition("True", "Draining", message, now)]
        return {**node, "spec": {**node.get("spec", {}), "unschedulable": True}, "status": status}

    details = {"replicas": moving, "deadline": format_timestamp(deadline)}
    message = f"drain of nodes/{name} started: {len(moving)} replica(s) to move"
    audit = AuditEntry("drain_started", actor, object_ref(NODE, name), message, details)
    return await update_object(plane, NODE, name, mutate, audit)
