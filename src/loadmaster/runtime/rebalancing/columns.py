"""The cache -> the rebalancer's columns (``controllers.rebalance_inputs``), at ``now``.

Nodes sorted by name, replicas by name. Amounts in the scheduler's integer units (millicores, bytes),
which is all a footprint needs (request / allocatable). A replica is movable when it is Running,
belongs to no ``global`` or ``hosts`` service, has no volumes, is not a replacement itself and has no
replacement in flight (``<name>.next``). Its latest bind is ``manifests.task_model.bound_at_s`` (the
scheduler's ``status.bound_at``, else its start): read from the store, so the replica cooldown survives a
failover.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from loadmaster.controllers.rebalance_inputs import NodeColumns, ReplicaColumns
from loadmaster.core.resources import CPU, MEMORY, QuantityError
from loadmaster.manifests import NODE, REPLICA
from loadmaster.manifests.node_model import allocatable_of, node_state
from loadmaster.manifests.replicas import ReplicaPhase
from loadmaster.manifests.task_model import bound_at_s, request_of
from loadmaster.manifests.timestamps import parse_timestamp
from loadmaster.runtime.plane.object_cache import ObjectCache

REPLACEMENT_SUFFIX = ".next"  # the replacement of X is stored as X.next (make-before-break)
# Replicas in these phases hold their node's resources.
_HOLDING = frozenset(
    {ReplicaPhase.SCHEDULED.value, ReplicaPhase.RUNNING.value, ReplicaPhase.TERMINATING.value}
)
_PINNED = frozenset({"global", "hosts"})


def _seconds(stamp: object) -> float:
    return parse_timestamp(stamp).timestamp() if isinstance(stamp, str) else float("nan")


def _sample(status: Mapping[str, Any]) -> tuple[float, float, float]:
    pressure = status.get("pressure")
    if not isinstance(pressure, dict):
        return float("nan"), float("nan"), float("nan")
    return float(pressure["cpu"]), float(pressure["memory"]), _seconds(pressure.get("at"))


def node_columns(cache: ObjectCache, now: datetime, heartbeat_late_after: timedelta) -> NodeColumns:
    names = tuple(sorted(cache.objects[NODE]))
    count = len(names)
    allocatable = np.zeros((2, count))
    sample = np.full((2, count), np.nan)
    sample_at = np.full(count, np.nan)
    can_receive = np.zeros(count, dtype=bool)
    labels = []
    other: dict[str, np.ndarray] = {}
    for i, name in enumerate(names):
        obj = cache.objects[NODE][name].obj
        spec, status = obj.get("spec", {}), obj.get("status", {})
        amounts = allocatable_of(spec, status)
        allocatable[:, i] = (amounts.get(CPU, 0), amounts.get(MEMORY, 0))
        for resource, amount in amounts.items():
            if resource not in (CPU, MEMORY):
                other.setdefault(resource, np.zeros(count))[i] = amount
        cpu, memory, at = _sample(status)
        sample[:, i] = (cpu, memory)
        sample_at[i] = at
        heartbeat = status.get("last_heartbeat")
        on_time = isinstance(heartbeat, str) and now - parse_timestamp(heartbeat) <= heartbeat_late_after
        can_receive[i] = on_time and node_state(status, now) == "Ready" and not spec.get("unschedulable")
        labels.append(obj.get("metadata", {}).get("labels", {}) or {})
    return NodeColumns(
        names, allocatable, np.zeros((2, count)), sample, sample_at, can_receive, tuple(labels)
    )


def _request(spec: Mapping[str, Any]) -> dict[str, int]:
    try:
        return request_of(spec)  # resources plus the gpus shorthand
    except QuantityError:
        return {}


def replica_columns(cache: ObjectCache, nodes: NodeColumns) -> ReplicaColumns:
    """The replicas, and ``nodes.requested`` (and ``other_free``) filled in with what the placed ones
    request."""
    position = {name: i for i, name in enumerate(nodes.names)}
    stored = cache.objects[REPLICA]
    names = tuple(sorted(stored))
    count = len(names)
    node = np.full(count, -1, dtype=np.int64)
    request = np.zeros((2, count))
    declared = np.zeros((2, count), dtype=bool)
    service = np.zeros(count, dtype=np.int64)
    spread = np.zeros(count, dtype=bool)
    movable = np.zeros(count, dtype=bool)
    bound_at = np.full(count, np.nan)
    services: dict[tuple[str, str], int] = {}
    selectors: dict[int, Mapping[str, str]] = {}
    others: dict[int, Mapping[str, float]] = {}
    for t, name in enumerate(names):
        obj = stored[name].obj
        spec, status = obj.get("spec", {}), obj.get("status", {})
        phase = status.get("phase")
        where = position.get(status.get("node_ref") or "", -1)
        amounts = _request(spec)
        for r, resource in enumerate((CPU, MEMORY)):
            if resource in amounts:
                request[r, t], declared[r, t] = amounts[resource], True
        extra = {k: float(v) for k, v in amounts.items() if k not in (CPU, MEMORY) and v}
        if extra:
            others[t] = extra
        if phase in _HOLDING and where >= 0:
            node[t] = where
            nodes.requested[:, where] += request[:, t]
            for resource, amount in extra.items():
                free = nodes.other_free.get(resource)
                if free is not None:
                    free[where] -= amount
        key = (str(spec.get("owner", "")), str(spec.get("service", "")))
        service[t] = services.setdefault(key, len(services))
        placement = spec.get("placement")
        spread[t] = placement == "spread"
        movable[t] = (
            phase == ReplicaPhase.RUNNING.value
            and placement not in _PINNED
            and not spec.get("volumes")
            and not spec.get("replaces")
            and not name.endswith(REPLACEMENT_SUFFIX)
            and f"{name}{REPLACEMENT_SUFFIX}" not in stored
        )
        bound = bound_at_s(status)
        bound_at[t] = float("nan") if bound is None else bound
        if spec.get("node_selector"):
            selectors[t] = spec["node_selector"]
    return ReplicaColumns(
        names, node, request, declared, service, tuple(services), spread, movable, bound_at, selectors, others
    )
