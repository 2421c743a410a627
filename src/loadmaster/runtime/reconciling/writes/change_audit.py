"""Every controller action is an audit entry, written in the same transaction as the change itself.

| change | event type | about |
|---|---|---|
| CreateServiceReplicas | ``replicas_created`` | the deployment (service, names) |
| CreateGlobalReplica | ``replicas_created`` | the deployment (service, host) |
| CreateJobReplicas | ``replicas_created`` | the job |
| TerminateReplica | ``replica_stopped`` (``timeslot_ended`` at a slot end) | the replica (reason, message) |
| DeleteReplica | ``replica_removed`` | the replica (reason); a Terminated record's cleanup is not audited |
| ReturnToPending | ``replica_rescheduled`` | the replica (reason, src node, message) |
| RestartReplica | ``replica_restarted`` | the replica (failure, restart_count) |
| FailReplica | its reason: ``restart_exhausted``, ``subnet_pool_exhausted`` | the replica (reason, message) |
| MarkNodeNotReady | ``node_not_ready`` | the node (message, not_ready_at) |
| RecordNodeProbe | ``node_probed`` | the node (probe answer, probed_at) |
| MarkNodeLost | ``node_lost`` | the node (probe, policy, not_ready_at, probed_at, replicas moved) |
| StartReplacement | ``replacement_started`` | the replica replaced (reason, node, avoid_nodes, deadline) |
| CompleteReplacement | ``replica_rescheduled`` (drain), ``replacement_completed`` | the replica (src, dst) |
| AbortReplacement | ``replacement_aborted`` | the replica replaced (reason, message) |
| CompleteDrain | ``drain_completed`` | the node (removed) |
| NoteDrainBlocked | ``drain_blocked`` | the node (blocked replicas, message) |
| TimeOutDrain | ``drain_timeout`` | the node (not_moved, message) |

The reason is the rule that acted (``ScaledDown``, ``SpecChanged``, ``NodeNotReady``, ...), so one event
says what happened, to what, and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from loadmaster.controllers.changes import (
    AbortReplacement,
    Change,
    CompleteDrain,
    CompleteReplacement,
    CreateGlobalReplica,
    CreateJobReplicas,
    CreateServiceReplicas,
    DeleteReplica,
    FailReplica,
    MarkNodeLost,
    MarkNodeNotReady,
    NoteDrainBlocked,
    RecordNodeProbe,
    RestartReplica,
    ReturnToPending,
    StartReplacement,
    TerminateReplica,
    TimeOutDrain,
)
from loadmaster.controllers.timeslots import TIMESLOT_ENDED
from loadmaster.manifests import (
    DEPLOYMENT,
    JOB,
    NODE,
    REPLICA,
    global_replica_name,
    object_ref,
    replica_name,
)
from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.runtime.plane.audit import AuditEntry

CONTROLLERS = "controllers"  # the actor of every entry here
# A Terminated replica's record going away is bookkeeping: its stop was audited when it was asked for.
_QUIET_DELETES = frozenset({"Terminated"})
# The event a completed replacement is, by why it was started (the timeline spec names a drain's move
# ``replica_rescheduled``); the others are ``replacement_completed``, with the reason in the details.
COMPLETION_EVENTS = {"drain": "replica_rescheduled"}


def replicas_created(change: CreateServiceReplicas, indices: Sequence[int]) -> AuditEntry:
    names = [replica_name(change.deployment, change.service, index) for index in indices]
    return AuditEntry(
        "replicas_created",
        CONTROLLERS,
        object_ref(DEPLOYMENT, change.deployment),
        f"created {', '.join(names)}",
        {"service": change.service, "replicas": names},
    )


def _about_replica(event: str, name: str, reason: str, message: str) -> AuditEntry:
    return AuditEntry(event, CONTROLLERS, object_ref(REPLICA, name), message, {"reason": reason})


def audit_entry(change: Change, now: datetime) -> AuditEntry | None:
    """The entry recording ``change`` (None: not worth one)."""
    if isinstance(change, CreateGlobalReplica):
        name = global_replica_name(change.deployment, change.service, change.host)
        return AuditEntry(
            "replicas_created",
            CONTROLLERS,
            object_ref(DEPLOYMENT, change.deployment),
            f"created {name} (global, node {change.host})",
            {"service": change.service, "replicas": [name], "host": change.host},
        )
    if isinstance(change, CreateJobReplicas):
        names = [f"{change.job}-{index}" for index in change.indices]
        return AuditEntry(
            "replicas_created",
            CONTROLLERS,
            object_ref(JOB, change.job),
            f"created {', '.join(names)}",
            {"replicas": names},
        )
    if isinstance(change, TerminateReplica):
        event = "timeslot_ended" if change.reason == TIMESLOT_ENDED else "replica_stopped"
        return _about_replica(event, change.name, change.reason, change.message)
    if isinstance(change, DeleteReplica):
        if change.reason in _QUIET_DELETES:
            return None
        message = change.message or f"record removed ({change.reason})"
        event = "timeslot_ended" if change.reason == TIMESLOT_ENDED else "replica_removed"
        return _about_replica(event, change.name, change.reason, message)
    if isinstance(change, RestartReplica):
        how = "removed from routing and restarted"
        details: dict[str, Any] = {"reason": change.failure, "restart_count": change.restart_count}
        if change.node_refusal is not None:  # AVA C9: its node no longer passes its filters
            how = f"restarted elsewhere: its node no longer takes it ({change.node_refusal})"
            details["elsewhere"] = True
        return AuditEntry(
            "replica_restarted",
            CONTROLLERS,
            object_ref(REPLICA, change.name),
            f"{change.failure}: {how} (restart {change.restart_count})",
            details,
        )
    if isinstance(change, FailReplica):
        return _about_replica(change.reason, change.name, change.reason, change.message)
    if isinstance(change, StartReplacement | CompleteReplacement | AbortReplacement):
        return _replacement_entry(change)
    if isinstance(change, CompleteDrain):
        message = f"node {change.node} drained: every replica moved; the node is removed"
        return AuditEntry("drain_completed", CONTROLLERS, object_ref(NODE, change.node), message, {})
    if isinstance(change, NoteDrainBlocked):
        about = object_ref(NODE, change.node)
        return AuditEntry(
            "drain_blocked", CONTROLLERS, about, change.message, {"blocked": list(change.blocked)}
        )
    if isinstance(change, TimeOutDrain):
        details = {"reason": "drain_timeout", "not_moved": list(change.not_moved)}
        return AuditEntry(
            "drain_timeout", CONTROLLERS, object_ref(NODE, change.node), change.message, details
        )
    if isinstance(change, ReturnToPending):
        return AuditEntry(
            "replica_rescheduled",
            CONTROLLERS,
            object_ref(REPLICA, change.name),
            f"rescheduled from {change.node} ({change.message})" if change.node else change.message,
            {"reason": change.reason, "src": change.node},
        )
    if isinstance(change, MarkNodeNotReady | RecordNodeProbe | MarkNodeLost):
        return _about_node(change, now)
    return None


def _about_node(change: MarkNodeNotReady | RecordNodeProbe | MarkNodeLost, now: datetime) -> AuditEntry:
    ref = object_ref(NODE, change.node)
    if isinstance(change, MarkNodeNotReady):
        details: dict[str, object] = {"reason": "NotReadyAt", "not_ready_at": format_timestamp(now)}
        return AuditEntry("node_not_ready", CONTROLLERS, ref, change.message, details)
    if isinstance(change, RecordNodeProbe):
        message = (
            f"node {change.node}: the host answered the probe but its agent is silent; "
            "the node-loss policy waits agent_down_wait more"
        )
        details = {"probe": change.answer, "probed_at": format_timestamp(change.probed_at)}
        return AuditEntry("node_probed", CONTROLLERS, ref, message, details)
    details = {
        "reason": "NodeLost",
        "probe": change.answer,
        "policy": change.policy,
        "not_ready_at": format_timestamp(change.not_ready_at),
        "probed_at": format_timestamp(change.probed_at),
        "lost_at": format_timestamp(now),
        "replicas": list(change.replicas),
    }
    return AuditEntry("node_lost", CONTROLLERS, ref, change.message, details)


def _replacement_entry(change: StartReplacement | CompleteReplacement | AbortReplacement) -> AuditEntry:
    about = object_ref(REPLICA, change.replica)
    if isinstance(change, StartReplacement):
        where = f"on reserved node {change.node}" if change.node else "to be placed"
        avoiding = f", avoiding {', '.join(change.avoid_nodes)}" if change.avoid_nodes else ""
        details: dict[str, object] = {"reason": change.reason, "avoid_nodes": list(change.avoid_nodes)}
        if change.node is not None:
            details["dst"] = change.node
        if change.deadline is not None:
            details["deadline"] = format_timestamp(change.deadline)
        message = f"replacement of {change.replica} started ({change.reason}), {where}{avoiding}"
        return AuditEntry("replacement_started", CONTROLLERS, about, message, details)
    if isinstance(change, CompleteReplacement):
        event = COMPLETION_EVENTS.get(change.reason, "replacement_completed")
        message = f"{change.replica} now runs on {change.dst} (was {change.src}; {change.reason})"
        details = {"reason": change.reason, "src": change.src, "dst": change.dst}
        return AuditEntry(event, CONTROLLERS, about, message, details)
    message = change.message or f"replacement of {change.replica} given up ({change.reason})"
    return AuditEntry("replacement_aborted", CONTROLLERS, about, message, {"reason": change.reason})
