"""What agents write: node registration and heartbeats, and their replicas' status reports.

Bodies are checked field by field (unknown fields included) and the resulting object is validated
with the manifests' own rules before anything is written, so an error names the body's field
(``capacity.cpu``) and nothing is stored. The server's clock, not the agent's, stamps heartbeats.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from loadmaster.manifests import (
    NODE,
    REPLICA,
    ManifestErrors,
    can_transition,
    manifest_from_object,
    object_ref,
)
from loadmaster.manifests.replicas import ReplicaPhase, incarnation_of
from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.manifests.validation import describe, dns_name_problem
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.audit import AuditEntry
from loadmaster.runtime.plane.errors import FieldProblem, ForbiddenError, InvalidError, WriteConflictError
from loadmaster.runtime.plane.phase_condition import phase_condition, with_phase_condition
from loadmaster.runtime.plane.store_layout import encode_object, object_key, object_of
from loadmaster.runtime.plane.store_retries import write_latest
from loadmaster.runtime.plane.tokens import TokenGrant
from loadmaster.runtime.requests.object_update import update_object
from loadmaster.store.interface import Entry, Op, Put

# What the real agent publishes about itself (docs/agent.md): kept in the node's status as sent.
AGENT_NODE_FIELDS = ("probe_address", "agent", "pressure")
REGISTER_FIELDS = ("name", "labels", "capacity", "system_reserved", "taints", "network", *AGENT_NODE_FIELDS)
HEARTBEAT_FIELDS = ("network", "conditions", *AGENT_NODE_FIELDS)
# What an agent reports about a replica's process besides its phase (docs/agent.md), and their types.
PROCESS_FIELDS: dict[str, type] = {
    "pid": int,
    "healthy": bool,
    "degraded": bool,
    "exited": bool,
    "routable": bool,
    "commands_done": int,
}
STATUS_FIELDS = ("phase", "message", "exit_code", "reason", "incarnation", *PROCESS_FIELDS)
AGENT_PHASES = (ReplicaPhase.RUNNING, ReplicaPhase.FAILED, ReplicaPhase.TERMINATED, ReplicaPhase.SUCCEEDED)
# Manifest paths -> the body fields they came from.
_BODY_PATHS = (
    ("metadata.name", "name"),
    ("metadata.labels", "labels"),
    ("status.network", "network"),
    ("status.conditions", "conditions"),
    ("spec.", ""),
)


def check_body(body: object, allowed: Iterable[str], required: Iterable[str] = ()) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise InvalidError("the body must be a JSON object", [FieldProblem("", "expected a JSON object")])
    allowed = tuple(allowed)
    problems = [
        FieldProblem(str(k), f"unknown field (expected {', '.join(allowed)})")
        for k in body
        if k not in allowed
    ]
    problems += [FieldProblem(k, "required") for k in required if k not in body]
    if problems:
        raise InvalidError(
            "the body has problems: " + "; ".join(f"{p.path}: {p.message}" for p in problems), problems
        )
    return body


def _body_path(path: str) -> str:
    """``metadata.labels.a`` -> ``labels.a``, ``status.conditions[0]`` -> ``conditions[0]``,
    ``spec.capacity.cpu`` -> ``capacity.cpu``: the rest of the path keeps its own separator."""
    for manifest_path, body_path in _BODY_PATHS:
        if path.startswith(manifest_path):
            return body_path + path[len(manifest_path) :]
    return path


def _agent_conditions(body: Mapping[str, Any]) -> list[Any] | None:
    """The body's ``conditions``: a list of condition objects (their fields are the manifests' to
    check), or None when absent; anything else is refused here, before it is merged with Ready."""
    conditions = body.get("conditions")
    if conditions is None:
        return None
    if not isinstance(conditions, list):
        problem = FieldProblem("conditions", f"expected a list of conditions, got {describe(conditions)}")
        raise InvalidError(f"conditions: {problem.message}", [problem])
    problems = [
        FieldProblem(f"conditions[{index}]", f"expected a condition object, got {describe(item)}")
        for index, item in enumerate(conditions)
        if not isinstance(item, dict)
    ]
    if problems:
        raise InvalidError("; ".join(f"{p.path}: {p.message}" for p in problems), problems)
    return conditions


def _validated_node(obj: dict[str, Any]) -> dict[str, Any]:
    """The node object as the manifests' rules normalise it; InvalidError naming body fields if not valid."""
    try:
        manifest = manifest_from_object(obj, "<request>")
    except ManifestErrors as errors:
        problems = [FieldProblem(_body_path(e.path), e.message, e.ref) for e in errors.errors]
        raise InvalidError("; ".join(f"{p.path}: {p.message}" for p in problems), problems) from None
    return {**obj, "spec": manifest.spec, "status": manifest.status}


def _ready_conditions(status: Mapping[str, Any], now: str, extra: list[Any] | None = None) -> list[Any]:
    """The node's conditions after a heartbeat: a Ready condition that is already True is kept as it is
    (a heartbeat is not a transition, so it adds no condition); otherwise Ready becomes True now."""
    current = extra if extra is not None else status.get("conditions", [])
    ready = next((c for c in current if c.get("type") == "Ready"), None)
    if ready is not None and ready.get("status") == "True" and status.get("state") == "Ready":
        return list(current)
    kept = [c for c in current if c.get("type") != "Ready"]
    return [
        *kept,
        {
            "type": "Ready",
            "status": "True",
            "reason": "Heartbeat",
            "message": "the agent reported",
            "last_transition_time": now,
        },
    ]


async def register_node(plane: ControlPlane, body: object, actor: str) -> dict[str, Any]:
    body = check_body(body, REGISTER_FIELDS, required=("name", "capacity"))
    name = body["name"]
    problem = dns_name_problem(name)
    if problem:
        raise InvalidError(f"name: {problem}", [FieldProblem("name", problem)])
    key = object_key(NODE, name)

    def plan(entry: Entry | None) -> tuple[Sequence[Op], dict[str, Any]]:
        now = format_timestamp(plane.clock.now())
        stored = object_of(entry) if entry is not None else {}
        spec = {
            **stored.get("spec", {}),
            "capacity": body["capacity"],
            "system_reserved": body.get("system_reserved") or {},
            "taints": body.get("taints") or [],
        }
        status = {k: v for k, v in stored.get("status", {}).items() if k not in ("allocatable",)}
        status.update(state="Ready", last_heartbeat=now, conditions=_ready_conditions(status, now))
        if body.get("network"):
            status["network"] = body["network"]
        status.update((k, body[k]) for k in AGENT_NODE_FIELDS if k in body)
        metadata = {
            "name": name,
            "labels": body.get("labels") or {},
            "created_at": stored.get("metadata", {}).get("created_at", now),
        }
        obj = _validated_node(
            {
                "api_version": "loadmaster/v1",
                "kind": NODE,
                "metadata": metadata,
                "spec": spec,
                "status": status,
            }
        )
        action = "registered" if entry is None else "re-registered"
        audit = AuditEntry("register", actor, object_ref(NODE, name), f"{action} nodes/{name}")
        put = Put(key, encode_object(obj), expect_revision=entry.mod_revision if entry else 0)
        return [put, *plane.audit.ops([audit])], obj

    obj, revision = await write_latest(
        plane.store, key, plane.write_fence, plan, what=object_ref(NODE, name), doing="registered"
    )
    obj["metadata"]["revision"] = revision
    return obj


async def heartbeat(plane: ControlPlane, name: str, body: object) -> dict[str, Any]:
    body = check_body({} if body is None else body, HEARTBEAT_FIELDS)
    conditions = _agent_conditions(body)
    now = format_timestamp(plane.clock.now())

    def mutate(node: dict[str, Any]) -> dict[str, Any]:
        status = dict(node.get("status", {}))
        status.update(
            state="Ready", last_heartbeat=now, conditions=_ready_conditions(status, now, conditions)
        )
        if body.get("network"):
            status["network"] = body["network"]
        status.update((k, body[k]) for k in AGENT_NODE_FIELDS if k in body)
        changed = {**node, "status": status}
        # A bare heartbeat changes only what the server writes itself: nothing of the agent's to validate.
        return _validated_node(changed) if body else changed

    # Heartbeats are not audited (one per node every 30 s would drown everything else), but a node
    # that comes back is: NotReady -> Ready is a transition an operator looks for.
    cached = plane.cache.get(NODE, name)
    was_not_ready = cached is not None and cached.obj.get("status", {}).get("state") == "NotReady"
    audit = (
        AuditEntry("node_ready", "agent", object_ref(NODE, name), f"node {name} is Ready again (heartbeat)")
        if was_not_ready
        else None
    )
    return await update_object(plane, NODE, name, mutate, audit)


def _status_body_problems(body: Mapping[str, Any]) -> list[FieldProblem]:
    problems = []
    if body["phase"] not in AGENT_PHASES:
        problems.append(
            FieldProblem("phase", f"expected one of {', '.join(AGENT_PHASES)}, got {body['phase']!r}")
        )
    for field in ("message", "reason", "incarnation"):
        if field in body and not isinstance(body[field], str):
            problems.append(FieldProblem(field, "expected a string"))
    exit_code = body.get("exit_code")
    if exit_code is not None and (isinstance(exit_code, bool) or not isinstance(exit_code, int)):
        problems.append(FieldProblem("exit_code", "expected an integer"))
    for field, kind in PROCESS_FIELDS.items():
        value = body.get(field)
        # bool is an int in Python: an integer field must not take true/false.
        if value is not None and (not isinstance(value, kind) or (kind is int and isinstance(value, bool))):
            problems.append(
                FieldProblem(field, f"expected {'true or false' if kind is bool else 'an integer'}")
            )
        elif isinstance(value, int) and value < 0:
            problems.append(FieldProblem(field, "must not be negative"))
    return problems


def _process_fields(body: Mapping[str, Any], status: Mapping[str, Any]) -> dict[str, Any]:
    """The process fields the report changes; a process reported running again (``exited: false``)
    drops the previous run's exit code."""
    changed = {k: body[k] for k in PROCESS_FIELDS if k in body and status.get(k) != body[k]}
    exit_code = body.get("exit_code")
    if exit_code is not None and status.get("exit_code") != exit_code:
        changed["exit_code"] = exit_code
    return changed


async def report_replica_status(
    plane: ControlPlane, name: str, body: object, reporter: TokenGrant | None = None
) -> dict[str, Any]:
    """The replica after the agent's report; ForbiddenError when ``reporter`` is an agent token bound to
    another node than the one the replica is placed on (checked on the copy the write compares).

    A report in the replica's current phase still updates the process fields (pid, healthy, degraded,
    exited, routable, commands_done): a Running replica's health changes without a phase change. A
    report naming an ``incarnation`` other than the stored one is refused (409): it is about a process
    the store no longer knows under this name."""
    body = check_body(body, STATUS_FIELDS, required=("phase",))
    problems = _status_body_problems(body)
    if problems:
        raise InvalidError("; ".join(f"{p.path}: {p.message}" for p in problems), problems)
    target = ReplicaPhase(body["phase"])
    now = plane.clock.now()

    def mutate(replica: dict[str, Any]) -> dict[str, Any] | None:
        status = dict(replica.get("status", {}))
        if reporter is not None and not reporter.may_act_for(status.get("node_ref")):
            raise ForbiddenError(
                f"this agent token is bound to nodes/{reporter.node}; replicas/{name} is placed on "
                f"nodes/{status.get('node_ref') or '(none)'}"
            )
        incarnation = body.get("incarnation")
        held = incarnation_of(replica)
        if incarnation is not None and incarnation != held:
            raise WriteConflictError(
                f"replicas/{name}: incarnation {incarnation} is no longer assigned (now: {held})"
            )
        current = ReplicaPhase(status.get("phase", ReplicaPhase.PENDING.value))
        changed = _process_fields(body, status)
        if current == target and not changed:
            return None  # a repeated report (the agent retried): nothing to do
        if current != target and not can_transition(current, target):
            raise WriteConflictError(f"replicas/{name}: a replica cannot go from {current} to {target}")
        status.update(changed)
        if body.get("exited") is False:
            status.pop("exit_code", None)
        stamp = format_timestamp(now)
        if current != target:
            status["phase"] = target.value
            status["started_at" if target == ReplicaPhase.RUNNING else "finished_at"] = stamp
        message = body.get("message") or f"reported {target.value} by the agent"
        troubled = bool(status.get("exited") or status.get("degraded")) and target == ReplicaPhase.RUNNING
        satisfied = target != ReplicaPhase.FAILED and not troubled
        condition = phase_condition(satisfied, body.get("reason") or target.value, message, now)
        status["conditions"] = with_phase_condition(status, condition)
        return {**replica, "status": status}

    return await update_object(plane, REPLICA, name, mutate)
