"""The node-loss timeline of a node (``GET /api/nodes/{name}/node-loss``) and of a replica's node (in
``why``): ``controllers/nodes/node_loss_report.py`` over the cached node and the server's node-loss
settings."""

from __future__ import annotations

from typing import Any

from loadmaster.controllers.nodes.node_loss import NODE_LOST
from loadmaster.controllers.nodes.node_loss_report import node_loss_report
from loadmaster.manifests import NODE, REPLICA
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.errors import NotFoundError
from loadmaster.runtime.plane.phase_condition import phase_condition_of
from loadmaster.runtime.reconciling.controller_views import node_view


def node_loss_of(plane: ControlPlane, name: str) -> dict[str, Any] | None:
    """The node's timeline; None while it is Ready. NotFoundError if there is no such node."""
    cached = plane.cache.get(NODE, name)
    if cached is None:
        raise NotFoundError(f"nodes/{name} not found")
    moved = _moved_by_loss_of(plane, name)
    return node_loss_report(node_view(cached), plane.settings.node_loss, plane.clock.now(), moved)


def replica_node_loss(plane: ControlPlane, name: str) -> dict[str, Any] | None:
    """The timeline of the node a replica is on, or of the lost node it was moved from while it waits
    for a new one (None: neither). Moved from: its Phase condition still says NodeLost, or, once a
    placement attempt has replaced that condition (one Phase condition is kept), the node it was on
    lists it among the replicas its loss moved."""
    cached = plane.cache.get(REPLICA, name)
    if cached is None:
        return None
    status = cached.obj.get("status", {})
    node = status.get("node_ref")
    if node is None:
        previous = status.get("previous_node_ref")
        condition = phase_condition_of(status) or {}
        if condition.get("reason") == NODE_LOST or name in _moved_by_loss_of(plane, previous):
            node = previous
    if not node or plane.cache.get(NODE, node) is None:
        return None
    return node_loss_of(plane, node)


def _moved_by_loss_of(plane: ControlPlane, node: str | None) -> list[str]:
    cached = plane.cache.get(NODE, node) if node else None
    if cached is None:
        return []
    return list((cached.obj.get("status", {}).get("node_loss") or {}).get("moved") or [])
