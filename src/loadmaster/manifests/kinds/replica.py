"""Replica: created by the server, one per running copy of a service or task of a job.

``spec`` is the resolved service (or job task) spec plus who owns it and which copy it is;
``status`` is what the scheduler and the agent report: phase, node_ref, conditions, restarts.
"""

from __future__ import annotations

import re
from typing import Any

from loadmaster.manifests.errors import Problems
from loadmaster.manifests.kind_names import DEPLOYMENT, JOB
from loadmaster.manifests.kinds.deployment import SERVICE_ONLY_FIELDS
from loadmaster.manifests.kinds.status_fields import conditions
from loadmaster.manifests.quantity_fields import timestamp
from loadmaster.manifests.replicas import ReplicaPhase
from loadmaster.manifests.task_fields import TASK_FIELDS, check_task, signal_name
from loadmaster.manifests.validation import (
    at,
    boolean,
    describe,
    dns_name,
    integer,
    list_of,
    number,
    object_of,
    one_of,
    read_object,
    text,
    unique_dns_names,
)

_SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


def _sha256_hex(problems: Problems, path: str, value: object) -> str:
    if not isinstance(value, str) or not _SHA256_HEX.match(value):
        problems.add(path, f"expected 64 lowercase hex digits (SHA-256), got {describe(value)}")
    return str(value)


IDENTITY_FIELDS = {
    "owner_kind": one_of(DEPLOYMENT, JOB),
    "owner": dns_name,
    "service": dns_name,  # deployments only
    "index": integer(0),  # from the per-service counter; absent for global replicas
    "host": dns_name,  # global replicas only: the node this copy belongs to
    "spec_hash": _sha256_hex,
    "min_available": integer(1),  # jobs only: the gang size, so a Job can be rebuilt from its replicas
    "incarnation": text,  # unique per incarnation (manifests.replicas.new_incarnation): agents key work by it
}
# A make-before-break replacement ``X.next`` (controllers/replacement.py) carries these besides.
REPLACEMENT_FIELDS = {
    "replaces": dns_name,  # X
    "replacement_reason": text,  # drain | rollout | rebalance | consolidate
    "replacement_deadline": timestamp,  # not Running by then: given up, X keeps running
    "avoid_nodes": unique_dns_names,  # nodes the scheduler must not place it on (a drain's node)
}
_SERVICE_FIELDS = {key: reader for key, reader in SERVICE_ONLY_FIELDS.items() if key != "replicas"}
SPEC_FIELDS = {**IDENTITY_FIELDS, **REPLACEMENT_FIELDS, **TASK_FIELDS, **_SERVICE_FIELDS}


def read_spec(problems: Problems, value: object, name: str) -> dict[str, Any]:
    read = read_object(problems, "spec", value, SPEC_FIELDS, required=("owner_kind", "owner", "spec_hash"))
    check_task(problems, "spec", read, value)
    if isinstance(value, dict):
        _check_identity(problems, read, value)
    return read


def _check_identity(problems: Problems, read: dict[str, Any], raw: dict[str, Any]) -> None:
    is_global = read.get("placement") == "global"
    if read.get("owner_kind") == DEPLOYMENT:
        if "service" not in raw:
            problems.add("spec.service", "required for a replica of a Deployment")
        if "min_available" in raw:
            problems.add("spec.min_available", "only a Job's replicas have min_available")
    elif read.get("owner_kind") == JOB:
        for field in ("service", "host"):
            if field in raw:
                problems.add(at("spec", field), "only a Deployment's replicas have this field")
    if is_global and "host" not in raw:
        problems.add("spec.host", "required for a replica of a global service")
    if not is_global and "index" not in raw:
        problems.add("spec.index", "required (only global replicas are named by host)")
    if is_global and "index" in raw:
        problems.add("spec.index", "a global replica is named by its host, not an index")


# The replica commands the leader writes and the agent executes (status.commands).
REPLICA_COMMANDS = ("restart", "remove_from_routing")
_PLACED_PHASES = (ReplicaPhase.SCHEDULED, ReplicaPhase.RUNNING)

COMMAND_TYPES = ("remove_from_routing", "restart")
replica_command = object_of(
    {"id": integer(1), "type": one_of(*COMMAND_TYPES), "at": timestamp}, required=("id", "type", "at")
)

STATUS_FIELDS = {
    "phase": one_of(*ReplicaPhase),
    "node_ref": dns_name,
    "previous_node_ref": dns_name,  # where it ran before it returned to Pending (stickiness)
    # Since when a replica that ran has not been active (its node was lost or deleted): stale gangs.
    "inactive_since": timestamp,
    "conditions": conditions,
    "restart_count": integer(0),
    "started_at": timestamp,
    "bound_at": timestamp,  # its latest bind (placement or move): the voluntary-move cooldown counts from it
    "finished_at": timestamp,
    "last_health_at": timestamp,
    "exit_code": integer(),
    # The restart policy (docs/restarts.md): what the agent said last, and the commands the leader
    # wrote for it (each id executed once; ``commands_done`` is the highest id the agent has executed).
    "healthy": boolean,
    "degraded": boolean,
    "exited": boolean,
    "pid": integer(0),
    "routable": boolean,
    "commands": list_of(replica_command),
    "commands_done": integer(0),
    # How the agent stops it (runtime/plane/stop_orders.py), written with every Terminating.
    "stop": object_of(
        {"signal": signal_name, "grace_period_s": number(0)}, required=("signal", "grace_period_s")
    ),
}


def read_status(problems: Problems, path: str, value: object) -> dict[str, Any]:
    read = read_object(problems, path, value, STATUS_FIELDS)
    phase = read.setdefault("phase", ReplicaPhase.PENDING.value)
    if phase in _PLACED_PHASES and "node_ref" not in read:
        problems.add(at(path, "node_ref"), f"required when the phase is {phase}")
    return read
