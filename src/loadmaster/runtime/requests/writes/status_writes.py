"""What agents write: node registration and heartbeats, and their replicas' status reports.

Bodies are checked field by field (unknown fields included) and the resulting object is validated
with the manifests' own rules before anything is written, so an error names the body's field
(``capacity.cpu``) and nothing is stored. The server's clock, not the agent's, stamps heartbeats.

A heartbeat that changes nothing but the time (the node is Ready with its Ready condition True, and
the agent sent no status) writes only the node's lease ``/heartbeats/<node>``: a put of a few bytes,
which the object cache folds into the node (object_cache.py). Every other heartbeat writes the node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from loadmaster.core.resources import MEMORY, format_quantity
from loadmaster.manifests import (
    NODE,
    REPLICA,
    ManifestErrors,
    manifest_from_object,
    object_ref,
)
from loadmaster.manifests.model.node_model import allocatable_of
from loadmaster.manifests.replicas import incarnation_of
from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.manifests.validation import describe, dns_name_problem
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.audit import AuditEntry
from loadmaster.runtime.plane.errors import (
    FieldProblem,
    ForbiddenError,
    InvalidError,
    RequestError,
    WriteConflictError,
)
from loadmaster.runtime.plane.object_cache import Cached
from loadmaster.runtime.plane.storage.store_layout import encode_object, heartbeat_key, object_key, object_of
from loadmaster.runtime.plane.storage.store_retries import write_latest
from loadmaster.runtime.plane.tokens import TokenGrant
from loadmaster.runtime.requests.writes.object_update import update_object
from loadmaster.runtime.requests.writes.pressure_samples import sample_of
from loadmaster.runtime.requests.writes.replica_reports import (
    REPORT_FIELDS,
    checked_report,
    is_new_pull_failure,
    merged_status,
)
from loadmaster.store.codec import encode
from loadmaster.store.interface import MAX_TXN_OPS, Entry, Op, Put

# What the real agent publishes about itself (docs/agent.md): kept in the node's status, the address and
# the driver as sent, the pressure as a sample stamped with its arrival (pressure_samples.py).
AGENT_NODE_FIELDS = ("probe_address", "agent", "pressure")
_AS_SENT = ("probe_address", "agent")
# The machine's shape fields an agent may declare besides capacity (the real agent's ``--gpus``).
REGISTER_SHAPE_FIELDS = ("gpu_model", "gpu_driver", "gpu_capabilities")
REGISTER_FIELDS = (
    "name", "labels", "capacity", "system_reserved", "taints", "network", *AGENT_NODE_FIELDS,
    *REGISTER_SHAPE_FIELDS,
)  # fmt: skip
HEARTBEAT_FIELDS = ("network", "conditions", *AGENT_NODE_FIELDS)
NODE_STATUS_FIELDS = ("pressure",)
LEASES_PER_TXN = MAX_TXN_OPS - 1  # and the fence's compare
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


def validated_node(obj: dict[str, Any]) -> dict[str, Any]:
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


def _allocatable(spec: Mapping[str, Any]) -> dict[str, str]:
    """``status.allocatable`` as the server writes it (manifests.md): capacity - system_reserved."""
    amounts = allocatable_of(spec, {})
    return {resource: _exact_quantity(resource, amount) for resource, amount in sorted(amounts.items())}


def _exact_quantity(resource: str, amount: int) -> str:
    """A quantity that parses back to exactly ``amount`` (the scheduler reads status.allocatable):
    memory in the largest binary unit that divides it (``format_quantity`` rounds to 4 digits)."""
    if resource == MEMORY:
        for suffix, unit in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if amount and amount % unit == 0:
                return f"{amount // unit}{suffix}"
        return str(amount)
    return format_quantity(resource, amount)


async def register_node(plane: ControlPlane, body: object, actor: str) -> dict[str, Any]:
    body = check_body(body, REGISTER_FIELDS, required=("name", "capacity"))
    name = body["name"]
    problem = dns_name_problem(name)
    if problem:
        raise InvalidError(f"name: {problem}", [FieldProblem("name", problem)])
    key = object_key(NODE, name)

    def plan(entry: Entry | None) -> tuple[Sequence[Op], dict[str, Any]]:
        moment = plane.clock.now()
        now = format_timestamp(moment)
        stored = object_of(entry) if entry is not None else {}
        spec = {
            **stored.get("spec", {}),
            "capacity": body["capacity"],
            "system_reserved": body.get("system_reserved") or {},
            "taints": body.get("taints") or [],
            **{k: body[k] for k in REGISTER_SHAPE_FIELDS if k in body},
        }
        status = {k: v for k, v in stored.get("status", {}).items() if k not in ("allocatable", "node_loss")}
        status.update(state="Ready", last_heartbeat=now, conditions=_ready_conditions(status, now))
        if body.get("network"):
            status["network"] = body["network"]
        if "pressure" in body:
            status["pressure"] = sample_of(body["pressure"], moment)
        status.update((k, body[k]) for k in _AS_SENT if k in body)
        metadata = {
            "name": name,
            "labels": body.get("labels") or {},
            "created_at": stored.get("metadata", {}).get("created_at", now),
        }
        obj = validated_node(
            {
                "api_version": "loadmaster/v1",
                "kind": NODE,
                "metadata": metadata,
                "spec": spec,
                "status": status,
            }
        )
        obj["status"]["allocatable"] = _allocatable(obj["spec"])
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
    moment = plane.clock.now()
    sample = sample_of(body["pressure"], moment) if "pressure" in body else None
    now = format_timestamp(moment)
    cached = plane.cache.get(NODE, name)
    # An agent that repeats its address and driver, unchanged, still sends a bare heartbeat: a lease.
    stored = cached.obj.get("status", {}) if cached is not None else {}
    news = {k: v for k, v in body.items() if k not in _AS_SENT or stored.get(k) != v}
    if not news and cached is not None and _only_time_moves(cached):
        return await _renew_lease(plane, cached, now)

    def mutate(node: dict[str, Any]) -> dict[str, Any]:
        status = dict(node.get("status", {}))
        status.update(
            state="Ready", last_heartbeat=now, conditions=_ready_conditions(status, now, conditions)
        )
        status.pop("node_loss", None)  # back: its node-loss clock stops (what moved stays where it is)
        if body.get("network"):
            status["network"] = body["network"]
        if sample is not None:
            status["pressure"] = sample
        status.update((k, body[k]) for k in _AS_SENT if k in body)
        changed = {**node, "status": status}
        # A bare heartbeat changes only what the server writes itself: nothing of the agent's to validate.
        return validated_node(changed) if body else changed

    # Heartbeats are not audited (one per node every 30 s would drown everything else), but a node
    # that comes back is: NotReady -> Ready is a transition an operator looks for.
    was_not_ready = cached is not None and cached.obj.get("status", {}).get("state") == "NotReady"
    audit = _node_ready_entry(name, cached.obj.get("status", {}), now) if cached and was_not_ready else None
    return await update_object(plane, NODE, name, mutate, audit)


def _only_time_moves(node: Cached) -> bool:
    """Whether a bare heartbeat would change nothing of ``node`` but ``status.last_heartbeat``."""
    status = node.obj.get("status", {})
    ready = next((c for c in status.get("conditions", []) if c.get("type") == "Ready"), None)
    return status.get("state") == "Ready" and ready is not None and ready.get("status") == "True"


async def _renew_lease(plane: ControlPlane, node: Cached, now: str) -> dict[str, Any]:
    """Write the node's lease (fenced like every write); the node as readers will see it."""
    await plane.store.txn([Put(heartbeat_key(node.name), encode({"at": now}))], await plane.write_fence())
    return {**node.obj, "status": {**node.obj.get("status", {}), "last_heartbeat": now}}


async def heartbeat_many(plane: ControlPlane, names: Sequence[str]) -> dict[str, str]:
    """Bare heartbeats of many nodes at one instant (a fleet of simulated nodes in one process): the
    leases of those whose heartbeat changes only the time go in transactions of LEASES_PER_TXN, the
    others get ``heartbeat`` one by one. The refusals, by node (a node deleted meanwhile, say)."""
    now = format_timestamp(plane.clock.now())
    leases: list[str] = []
    alone: list[str] = []
    for name in names:
        cached = plane.cache.get(NODE, name)
        (leases if cached is not None and _only_time_moves(cached) else alone).append(name)
    lease = encode({"at": now})
    for start in range(0, len(leases), LEASES_PER_TXN):
        ops = [Put(heartbeat_key(name), lease) for name in leases[start : start + LEASES_PER_TXN]]
        await plane.store.txn(ops, await plane.write_fence())
    refused: dict[str, str] = {}
    for name in alone:
        try:
            await heartbeat(plane, name, {})
        except RequestError as error:
            refused[name] = error.message
    return refused


def _node_ready_entry(name: str, status: Mapping[str, Any], now: str) -> AuditEntry:
    """``node_ready``, with since when it was NotReady and whether the node-loss policy had acted on it
    (what it moved stays where it is)."""
    details: dict[str, Any] = {"reason": "Heartbeat", "ready_at": now}
    not_ready = next(
        (c for c in status.get("conditions", []) if c.get("type") == "Ready" and c.get("status") == "False"),
        None,
    )
    if not_ready is not None:
        details["not_ready_at"] = not_ready.get("last_transition_time")
    lost_at = (status.get("node_loss") or {}).get("lost_at")
    if lost_at:
        details["lost_at"] = lost_at
    message = f"node {name} is Ready again (heartbeat)"
    if lost_at:
        message += "; the node-loss policy had acted on it, and nothing moves back"
    return AuditEntry("node_ready", "agent", object_ref(NODE, name), message, details)


async def report_node_status(plane: ControlPlane, name: str, body: object) -> dict[str, Any]:
    """``{"pressure": {cpu, memory, at?}}``: the node's latest pressure sample (not a heartbeat)."""
    body = check_body(body, NODE_STATUS_FIELDS, required=NODE_STATUS_FIELDS)
    sample = sample_of(body["pressure"], plane.clock.now())

    def mutate(node: dict[str, Any]) -> dict[str, Any]:
        return validated_node({**node, "status": {**node.get("status", {}), "pressure": sample}})

    return await update_object(plane, NODE, name, mutate)


async def report_replica_status(
    plane: ControlPlane, name: str, body: object, reporter: TokenGrant | None = None
) -> dict[str, Any]:
    """The replica after the agent's report (``replica_reports.py``); ForbiddenError when ``reporter`` is
    an agent token bound to another node than the one the replica is placed on (checked on the copy the
    write compares)."""
    report = checked_report(check_body(body, REPORT_FIELDS, required=("phase",)))
    now = plane.clock.now()
    cached = plane.cache.get(REPLICA, name)
    audit = None
    if cached is not None and is_new_pull_failure(cached.obj.get("status", {}), report):
        message = report.get("message") or "the image pull failed"
        audit = AuditEntry("image_pull_failed", "agent", object_ref(REPLICA, name), message)

    def mutate(replica: dict[str, Any]) -> dict[str, Any] | None:
        status = dict(replica.get("status", {}))
        if reporter is not None and not reporter.may_act_for(status.get("node_ref")):
            raise ForbiddenError(
                f"this agent token is bound to nodes/{reporter.node}; replicas/{name} is placed on "
                f"nodes/{status.get('node_ref') or '(none)'}"
            )
        held = incarnation_of(replica)
        incarnation = report.get("incarnation")
        if incarnation is not None and incarnation != held:
            raise WriteConflictError(
                f"replicas/{name}: incarnation {incarnation} is no longer assigned (now: {held})"
            )
        merged = merged_status(name, status, report, now)
        return None if merged is None else {**replica, "status": merged}

    return await update_object(plane, REPLICA, name, mutate, audit)
