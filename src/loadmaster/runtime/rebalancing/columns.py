"""The cache -> the rebalancer's columns (``controllers.rebalancing.rebalance_inputs``), at ``now``.

Nodes sorted by name (the destination tie-break); replicas in the cache's order, each one's row kept
from cycle to cycle until its revision changes (``ReplicaRows``: parsing quantities and timestamps is
what costs). Amounts are in the scheduler's integer units (millicores, bytes), which is all a footprint
needs (request / allocatable). A replica is movable when it is Running, belongs to no ``global`` or
``hosts`` service, has no volumes, is not a replacement itself and has no replacement in flight
(``<name>.next``). Its latest bind is ``manifests.model.task_model.bound_at_s`` (the scheduler's
``status.bound_at``, else its start): read from the store, so the replica cooldown survives a failover.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from loadmaster.controllers.rebalancing.rebalance_inputs import NodeColumns, ReplicaColumns
from loadmaster.core.resources import CPU, MEMORY, QuantityError
from loadmaster.fields.gpu_requests import is_device_request
from loadmaster.manifests.model.node_model import allocatable_of
from loadmaster.manifests.model.task_model import bound_at_s, request_of
from loadmaster.manifests.replicas import ReplicaPhase
from loadmaster.manifests.timestamps import parse_timestamp
from loadmaster.runtime.plane.object_cache import Cached

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


def _allocatable(
    spec: Mapping[str, Any], status: Mapping[str, Any], memo: dict[Any, dict[str, int]]
) -> dict[str, int]:
    """``allocatable_of``, parsed once per distinct shape (a node's shape rarely changes; its heartbeat
    and samples change its revision every 30 s)."""
    parts = (spec.get("capacity"), spec.get("system_reserved"), status.get("allocatable"))
    key = (*(tuple(sorted((part or {}).items())) for part in parts), "allocatable" in status)
    amounts = memo.get(key)
    if amounts is None:
        amounts = memo[key] = allocatable_of(spec, status)
    return amounts


def node_columns(
    stored: Mapping[str, Cached],
    now: datetime,
    heartbeat_late_after: timedelta,
    memo: dict[Any, dict[str, int]] | None = None,
) -> NodeColumns:
    """The ``stored`` nodes (the cache's, or a copy of them), sorted by name. ``memo``: parsed shapes
    kept between cycles."""
    memo = memo if memo is not None else {}
    names = tuple(sorted(stored))
    count = len(names)
    allocatable = np.zeros((2, count))
    sample = np.full((2, count), np.nan)
    sample_at = np.full(count, np.nan)
    can_receive = np.zeros(count, dtype=bool)
    labels = []
    other: dict[str, np.ndarray] = {}
    for i, name in enumerate(names):
        obj = stored[name].obj
        spec, status = obj.get("spec", {}), obj.get("status", {})
        amounts = _allocatable(spec, status, memo)
        allocatable[:, i] = (amounts.get(CPU, 0), amounts.get(MEMORY, 0))
        for resource, amount in amounts.items():
            if resource not in (CPU, MEMORY):
                other.setdefault(resource, np.zeros(count))[i] = amount
        cpu, memory, at = _sample(status)
        sample[:, i] = (cpu, memory)
        sample_at[i] = at
        heartbeat = status.get("last_heartbeat")
        on_time = isinstance(heartbeat, str) and now - parse_timestamp(heartbeat) <= heartbeat_late_after
        # A heartbeat on time is within the Ready window too; NotReady as written by the node controller.
        can_receive[i] = on_time and status.get("state") != "NotReady" and not spec.get("unschedulable")
        labels.append(obj.get("metadata", {}).get("labels", {}) or {})
    return NodeColumns(
        names, allocatable, np.zeros((2, count)), sample, sample_at, can_receive, tuple(labels), other
    )


def _request(spec: Mapping[str, Any], devices: Sequence[int]) -> dict[str, int]:
    try:
        return request_of(spec, devices)  # resources plus the gpus shorthand
    except QuantityError:
        return {}


@dataclass(frozen=True, slots=True)
class _Row:
    """What one stored revision of a replica contributes (parsing quantities and timestamps is the slow
    part: done once per revision, not once per cycle)."""

    node_ref: str
    holds: bool  # its phase holds the node's resources
    running: bool
    request: tuple[float, float]
    declared: tuple[bool, bool]
    extra: Mapping[str, float]  # gpu and other resources it requests
    service: tuple[str, str]
    spread: bool
    pinned: bool  # global or hosts placement, volumes, or a replacement itself: never moved voluntarily
    bound_at: float
    selector: Mapping[str, str] | None


def _row(name: str, obj: Mapping[str, Any]) -> _Row:
    spec, status = obj.get("spec", {}), obj.get("status", {})
    amounts = _request(spec, status.get("devices", ()))
    phase = status.get("phase")
    bound = bound_at_s(status)
    return _Row(
        node_ref=status.get("node_ref") or "",
        holds=phase in _HOLDING,
        running=phase == ReplicaPhase.RUNNING.value,
        request=(float(amounts.get(CPU, 0)), float(amounts.get(MEMORY, 0))),
        declared=(CPU in amounts, MEMORY in amounts),
        extra={k: float(v) for k, v in amounts.items() if k not in (CPU, MEMORY) and v},
        service=(str(spec.get("owner", "")), str(spec.get("service", ""))),
        spread=spec.get("placement") == "spread",
        pinned=spec.get("placement") in _PINNED
        or bool(spec.get("volumes"))
        # compose GPU requests: the rebalancer's destination check does not match driver or capabilities
        or is_device_request(spec.get("gpus"))
        or bool(spec.get("replaces"))
        or name.endswith(REPLACEMENT_SUFFIX),
        bound_at=float("nan") if bound is None else bound,
        selector=spec.get("node_selector") or None,
    )


@dataclass(slots=True)
class ReplicaRows:
    """Rows by replica, kept from cycle to cycle and rebuilt only for replicas whose revision changed."""

    rows: dict[str, tuple[int, _Row]] = field(default_factory=dict)

    def row(self, cached: Cached) -> _Row:
        known = self.rows.get(cached.name)
        if known is not None and known[0] == cached.mod_revision:
            return known[1]
        row = _row(cached.name, cached.obj)
        self.rows[cached.name] = (cached.mod_revision, row)
        return row

    def forget_gone(self, names: Collection[str]) -> None:
        for name in [n for n in self.rows if n not in names]:
            del self.rows[name]


def replica_columns(
    stored: Mapping[str, Cached], nodes: NodeColumns, memo: ReplicaRows | None = None
) -> ReplicaColumns:
    """The ``stored`` replicas (in the cache's order: candidates are ordered by name in the cycle), and
    ``nodes.requested`` (and ``other_free``) filled in with what the placed ones request."""
    memo = memo if memo is not None else ReplicaRows()
    position = {name: i for i, name in enumerate(nodes.names)}
    names = tuple(stored)
    memo.forget_gone(stored)
    rows = [memo.row(stored[name]) for name in names]
    count = len(names)
    node = np.array([position.get(row.node_ref, -1) if row.holds else -1 for row in rows], dtype=np.int64)
    request = np.array([row.request for row in rows], dtype=float).reshape(count, 2).T.copy()
    declared = np.array([row.declared for row in rows], dtype=bool).reshape(count, 2).T.copy()
    placed = node >= 0
    np.add.at(nodes.requested[0], node[placed], request[0, placed])
    np.add.at(nodes.requested[1], node[placed], request[1, placed])
    services: dict[tuple[str, str], int] = {}
    service = np.array([services.setdefault(row.service, len(services)) for row in rows], dtype=np.int64)
    movable = np.array(
        [
            row.running and not row.pinned and f"{name}{REPLACEMENT_SUFFIX}" not in stored
            for name, row in zip(names, rows, strict=True)
        ],
        dtype=bool,
    )
    selectors: dict[int, Mapping[str, str]] = {}
    others: dict[int, Mapping[str, float]] = {}
    for t, row in enumerate(rows):
        if row.selector:
            selectors[t] = row.selector
        if row.extra:
            others[t] = row.extra
            for resource, amount in row.extra.items():
                free = nodes.other_free.get(resource)
                if free is not None and node[t] >= 0:
                    free[node[t]] -= amount
    return ReplicaColumns(
        names,
        node,
        request,
        declared,
        service,
        tuple(services),
        np.array([row.spread for row in rows], dtype=bool),
        movable,
        np.array([row.bound_at for row in rows], dtype=float),
        selectors,
        others,
    )
