"""Replica commands: what the leader asks a replica's agent to do, written into the replica's status.

The shape is shared with the agents (``docs/restarts.md``): ``status.commands`` is a list of
``{"id": n, "type": "remove_from_routing" | "restart", "at": time}`` with ids growing by one; the agent
executes each id once, in order, and reports ``commands_done: n`` (the highest id it executed). Only the
last ``KEPT_COMMANDS`` are kept: an agent that has executed up to ``commands_done`` needs nothing older.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from loadmaster.controllers.changes import RestartReplica
from loadmaster.manifests import REPLICA
from loadmaster.manifests.replicas import ReplicaPhase
from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.runtime.plane.object_cache import ObjectCache
from loadmaster.runtime.plane.phase_condition import phase_condition, with_phase_condition
from loadmaster.runtime.plane.storage.store_layout import encode_object, object_key
from loadmaster.runtime.reconciling.controller_views import last_command_id
from loadmaster.store.interface import Op, Put

# A few restarts' worth: enough for an agent that missed a report or two, and the list stays small.
KEPT_COMMANDS = 8
RESTART_COMMANDS = ("remove_from_routing", "restart")


def with_commands(status: dict[str, Any], types: tuple[str, ...], now: datetime) -> dict[str, Any]:
    """``status`` with one command per type appended, ids following the last one written."""
    first = last_command_id(status) + 1
    stamp = format_timestamp(now)
    added = [{"id": first + offset, "type": kind, "at": stamp} for offset, kind in enumerate(types)]
    commands = [*(status.get("commands") or []), *added][-KEPT_COMMANDS:]
    return {**status, "commands": commands}


def restart_ops(cache: ObjectCache, change: RestartReplica, now: datetime) -> list[Op] | None:
    """The replica taken out of routing and restarted: its failure handled, its count moved on."""
    cached = cache.get(REPLICA, change.name)
    if cached is None or cached.mod_revision != change.revision:
        return None
    if change.node_refusal is not None:
        status = _restarted_elsewhere(dict(cached.obj.get("status", {})), change, now)
        obj = {**cached.obj, "status": status}
        return [Put(object_key(REPLICA, change.name), encode_object(obj), expect_revision=change.revision)]
    status = with_commands(dict(cached.obj.get("status", {})), RESTART_COMMANDS, now)
    status["healthy"] = status["degraded"] = status["exited"] = False  # handled: the agent starts it anew
    status["restart_count"] = change.restart_count
    if status.get("node_ref"):  # kept: its node still passes its filters (AVA C9)
        status["previous_node_ref"] = status["node_ref"]
    message = f"{change.failure}; restart {change.restart_count}"
    status["conditions"] = with_phase_condition(status, phase_condition(False, "Restarting", message, now))
    obj = {**cached.obj, "status": status}
    return [Put(object_key(REPLICA, change.name), encode_object(obj), expect_revision=change.revision)]


def _restarted_elsewhere(status: dict[str, Any], change: RestartReplica, now: datetime) -> dict[str, Any]:
    """Back to Pending, its node kept as ``previous_node_ref``: its agent stops it (no longer assigned
    there) and the scheduler places it on a node that passes its filters (AVA C9)."""
    node = status.pop("node_ref", None)
    status.update(
        phase=ReplicaPhase.PENDING.value,
        healthy=False,
        degraded=False,
        exited=False,
        restart_count=change.restart_count,
        inactive_since=format_timestamp(now),
    )
    if node:
        status["previous_node_ref"] = node
    message = (
        f"{change.failure}; restart {change.restart_count} elsewhere: node {node} no longer passes "
        f"its filters ({change.node_refusal})"
    )
    status["conditions"] = with_phase_condition(status, phase_condition(False, "Restarting", message, now))
    return status
