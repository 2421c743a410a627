"""How much of each node the replicas on it take, for the ``get nodes`` CPU/MEMORY/GPU columns.

A replica holds its request on its node while it is Scheduled, Running or Terminating (the scheduler
counts it until the agent reports it gone), so those are the phases summed here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from loadmaster.core.resources import MEMORY, MILLI, QuantityError, format_quantity
from loadmaster.manifests import ReplicaPhase
from loadmaster.manifests.model.node_model import allocatable_of
from loadmaster.manifests.model.task_model import request_of

HOLDING_PHASES = frozenset({ReplicaPhase.SCHEDULED, ReplicaPhase.RUNNING, ReplicaPhase.TERMINATING})


def replica_phase(replica: Mapping[str, Any]) -> str:
    return str((replica.get("status") or {}).get("phase", ReplicaPhase.PENDING.value))


def replica_node(replica: Mapping[str, Any]) -> str | None:
    node = (replica.get("status") or {}).get("node_ref")
    return str(node) if node else None


def replica_request(replica: Mapping[str, Any]) -> dict[str, int]:
    """The replica's request in canonical units (``gpus`` folded into ``gpu``); {} if it cannot be read."""
    try:
        status = replica.get("status") or {}
        return request_of(replica.get("spec") or {}, status.get("devices", ()))
    except (QuantityError, TypeError, ValueError):
        return {}


def used_by_node(replicas: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """``{node: {resource: canonical amount}}`` summed over the replicas holding resources there."""
    used: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for replica in replicas:
        node = replica_node(replica)
        if node is None or replica_phase(replica) not in HOLDING_PHASES:
            continue
        for resource, amount in replica_request(replica).items():
            used[node][resource] += amount
    return {node: dict(amounts) for node, amounts in used.items()}


def node_allocatable(node: Mapping[str, Any]) -> dict[str, int]:
    try:
        return allocatable_of(node.get("spec") or {}, node.get("status") or {})
    except (QuantityError, TypeError, ValueError):
        return {}


def short_quantity(resource: str, amount: int) -> str:
    """Table text: memory in binary units (``2Gi``), the rest in whole units (``1.5`` CPUs, not ``1500m``)."""
    if resource == MEMORY:
        return format_quantity(resource, amount)
    return f"{amount / MILLI:.3f}".rstrip("0").rstrip(".")


def used_of_allocatable(resource: str, used: Mapping[str, int], allocatable: Mapping[str, int]) -> str:
    """``"1.5/8"``: used and allocatable in the resource's own units; ``-`` when the node has none."""
    total = allocatable.get(resource, 0)
    taken = used.get(resource, 0)
    if not total and not taken:
        return "-"
    return f"{short_quantity(resource, taken)}/{short_quantity(resource, total)}"
