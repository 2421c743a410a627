"""The pressure rebalancer, one cycle (``shared/spec/timeline-format.md``, "Pressure rebalancer"; JACO H).

``rebalance(nodes, replicas, state, now)`` folds the latest samples into the EWMAs, then decides at most
one move. Only nodes whose latest sample is at most ``stale_after_s`` old take part (neither source nor
destination otherwise, and left out of max − min). With pressure(n) = max(cpu_ewma, memory_ewma):

* the source is the hottest node (ties by name); nothing happens unless it has been ≥ 0.85 for the last
  2 cycles and max − min ≥ 0.25 (node-level conditions: silence, no event);
* candidates are its movable replicas (not global, no volumes, not pinned to hosts, Running, no move in
  flight); none is one ``no_candidate`` skip;
* footprint(t, n)[r] = request[r, t] / allocatable[r, n] (0.12 cpu, 0.06 memory where none is declared);
  relief = footprint on the source in its dominant resource; score = relief − 0.01; candidates are
  tried by score, then replica name;
* per candidate, in order: relief ≥ 0.10 (``relief_floor``), not bound in the last 10 minutes
  (``cooldown_replica``); then the destinations (fresh data, Ready, schedulable, heartbeat on time; none
  is ``no_eligible_dst``) are narrowed gate by gate, and the gate that leaves none is the skip's reason:
  pressure after < 0.75 (``dst_cap``); cpu + memory after ≤ 1.0 and the request (gpus included) fits
  what is free (``resource_limits``); spread and node_selector allow it (``anti_affinity``); no
  voluntary move onto it in the last 2 minutes (``cooldown_node``);
* the first candidate with a passing destination moves to the one with the lowest pressure after (ties
  by name). Candidates tried before it are one ``rebalance_skipped`` each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from loadmaster.controllers.rebalancing.pressure_ewma import (
    CPU,
    RESOURCES,
    PressureState,
    fold_samples,
    pressure_of,
)
from loadmaster.controllers.rebalancing.rebalance_inputs import (
    DST_SUM_CAP,
    HOT_CYCLES,
    HOT_PRESSURE,
    MIN_IMBALANCE,
    MIN_RELIEF,
    MOVE_COST,
    BoolArray,
    FloatArray,
    NodeColumns,
    ReplicaColumns,
)
from loadmaster.core.voluntary_moves import DEFAULT_FOOTPRINT, DST_CAP, NODE_COOLDOWN_S, REPLICA_COOLDOWN_S

MOVED = "rebalance_moved"
SKIPPED = "rebalance_skipped"
SKIP_REASONS = (
    "cooldown_replica", "cooldown_node", "dst_cap", "relief_floor", "resource_limits", "anti_affinity",
    "no_eligible_dst", "no_candidate",
)  # fmt: skip
# Floats in events are rounded to this many digits: enough to read a gate's margin, short in the log.
DIGITS = 4
_DEFAULT = np.array(DEFAULT_FOOTPRINT)


@dataclass(frozen=True, slots=True)
class RebalanceEvent:
    type: str  # MOVED | SKIPPED
    replica: str | None  # None for no_candidate
    payload: dict[str, Any]  # the spec's fields (replica_id ... dst_pressure_after, reason on skips)


@dataclass(frozen=True, slots=True)
class Move:
    replica: str
    src: str
    dst: str
    event: RebalanceEvent


def rebalance(
    nodes: NodeColumns, replicas: ReplicaColumns, state: PressureState, now: float, *, stale_after_s: float
) -> tuple[list[Move], list[RebalanceEvent], PressureState]:
    state = state.aligned(nodes.names)
    fold_samples(state, nodes.sample, nodes.sample_at)
    state.last_cycle_at = now
    pressure = pressure_of(state)
    fresh = ~np.isnan(nodes.sample_at) & ~np.isnan(pressure)
    fresh[fresh] = now - nodes.sample_at[fresh] <= stale_after_s
    state.hot_cycles = np.where(fresh & (pressure >= HOT_PRESSURE), state.hot_cycles + 1, 0)
    if not fresh.any():
        return [], [], state  # absence is silence, not a fault (H8)
    ranked = np.where(fresh, pressure, -np.inf)
    src = int(np.argmax(ranked))  # the first maximum: names are sorted, so ties go by name
    imbalance = float(ranked[src] - pressure[fresh].min())
    if state.hot_cycles[src] < HOT_CYCLES or imbalance < MIN_IMBALANCE:
        return [], [], state
    cycle = _Cycle(nodes, replicas, state, now, pressure, src, fresh)
    return cycle.decide(), cycle.events, state


class _Cycle:
    """One cycle's decision once a source qualifies: candidates in score order, destinations gate by gate."""

    def __init__(
        self,
        nodes: NodeColumns,
        replicas: ReplicaColumns,
        state: PressureState,
        now: float,
        pressure: FloatArray,
        src: int,
        fresh: BoolArray,
    ) -> None:
        self.nodes, self.replicas, self.state, self.now = nodes, replicas, state, now
        self.pressure, self.src = pressure, src
        ewma_src = state.ewma[:, src]
        self.dominant = CPU if ewma_src[0] >= ewma_src[1] else 1
        self.pool = fresh & nodes.can_receive
        self.pool[src] = False
        self.free = nodes.allocatable - nodes.requested
        self.events: list[RebalanceEvent] = []
        self._cooled_mask: BoolArray | None = None  # the same for every candidate: made once

    def decide(self) -> list[Move]:
        replicas, src = self.replicas, self.src
        candidates = np.flatnonzero((replicas.node == src) & replicas.movable)
        if candidates.size == 0:
            self._skip("no_candidate", None, None, None)
            return []
        src_footprint = self._footprint(candidates, self.src)  # [r, c]
        relief = src_footprint[self.dominant]
        order = sorted(range(candidates.size), key=lambda i: (-relief[i], replicas.names[candidates[i]]))
        for i in order:
            t = int(candidates[i])
            if relief[i] < MIN_RELIEF:
                self._skip("relief_floor", t, src_footprint[:, i], None)
                continue
            if self.now - replicas.bound_at[t] < REPLICA_COOLDOWN_S:
                self._skip("cooldown_replica", t, src_footprint[:, i], None)
                continue
            dst_footprint = self._footprint(np.array([t]), None)[:, 0, :]  # [r, n]
            reason, dst = self._destination(t, dst_footprint)
            if reason:
                self._skip(reason, t, src_footprint[:, i], (dst, dst_footprint[:, dst]) if dst >= 0 else None)
                continue
            event = self._event(MOVED, t, src_footprint[:, i], (dst, dst_footprint[:, dst]), {})
            self.events.append(event)
            self.state.node_moved_at[self.nodes.names[dst]] = self.now
            return [Move(replicas.names[t], self.nodes.names[src], self.nodes.names[dst], event)]
        return []

    def _footprint(self, ts: np.ndarray, node: int | None) -> np.ndarray:
        """footprint[r, t] on ``node``, or footprint[r, t, n] on every node when ``node`` is None."""
        request, declared = self.replicas.request[:, ts], self.replicas.declared[:, ts]
        alloc = self.nodes.allocatable
        if node is not None:
            share = request / np.maximum(alloc[:, node : node + 1], 1e-12)
            return np.where(declared, share, _DEFAULT[:, None])
        share = request[:, :, None] / np.maximum(alloc[:, None, :], 1e-12)
        return np.where(declared[:, :, None], share, _DEFAULT[:, None, None])

    def _destination(self, t: int, footprint: np.ndarray) -> tuple[str, int]:
        """("", dst) when some destination passes every gate; else (reason, the closest destination)."""
        passing = self.pool
        if not passing.any():
            return "no_eligible_dst", -1
        after = self.state.ewma + footprint
        after_pressure = np.fmax(after[0], after[1])
        request = self.replicas.request[:, t : t + 1]
        fits = (after.sum(axis=0) <= DST_SUM_CAP) & (request <= self.free).all(axis=0)
        for resource, amount in self.replicas.other_request.get(t, {}).items():
            free = self.nodes.other_free.get(resource)
            fits &= False if free is None else amount <= free
        gates = (
            ("dst_cap", after_pressure < DST_CAP),
            ("resource_limits", fits),
            ("anti_affinity", self._allowed(t)),
            ("cooldown_node", self._cooled()),
        )
        for reason, mask in gates:
            narrowed = passing & mask
            if not narrowed.any():
                return reason, _lowest(after_pressure, passing)
            passing = narrowed
        return "", _lowest(after_pressure, passing)

    def _allowed(self, t: int) -> BoolArray:
        """Placement rules: spread (no other replica of the service there), node_selector."""
        replicas, count = self.replicas, len(self.nodes.names)
        allowed = np.ones(count, dtype=bool)
        if replicas.spread[t]:
            same = (replicas.service == replicas.service[t]) & (replicas.node >= 0)
            allowed[replicas.node[same]] = False
        selector = replicas.node_selector.get(t)
        if selector and self.nodes.labels:
            for n, labels in enumerate(self.nodes.labels):
                if any(labels.get(key) != value for key, value in selector.items()):
                    allowed[n] = False
        return allowed

    def _cooled(self) -> BoolArray:
        """Nodes given no voluntary move in the last NODE_COOLDOWN_S."""
        if self._cooled_mask is None:
            cooled = np.ones(len(self.nodes.names), dtype=bool)
            for name, at in self.state.node_moved_at.items():
                i = self.state.position.get(name)
                if i is not None and self.now - at < NODE_COOLDOWN_S:
                    cooled[i] = False
            self._cooled_mask = cooled
        return self._cooled_mask

    def _skip(
        self, reason: str, t: int | None, src_fp: np.ndarray | None, dst: tuple[int, np.ndarray] | None
    ) -> None:
        if t is None:
            payload = _payload(self, None, None, None)
            payload["reason"] = reason
            self.events.append(RebalanceEvent(SKIPPED, None, payload))
            return
        assert src_fp is not None
        self.events.append(self._event(SKIPPED, t, src_fp, dst, {"reason": reason}))

    def _event(
        self, kind: str, t: int, src_fp: np.ndarray, dst: tuple[int, np.ndarray] | None, extra: dict[str, Any]
    ) -> RebalanceEvent:
        payload = _payload(self, t, src_fp, dst)
        payload.update(extra)
        return RebalanceEvent(kind, self.replicas.names[t], payload)


def _lowest(after_pressure: FloatArray, among: BoolArray) -> int:
    """The node of ``among`` with the lowest pressure after the move; ties by name (the lowest index)."""
    return int(np.argmin(np.where(among, after_pressure, np.inf)))


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), DIGITS)


def _payload(
    cycle: _Cycle, t: int | None, src_fp: np.ndarray | None, dst: tuple[int, np.ndarray] | None
) -> dict[str, Any]:
    """The seed's payload (H7): who, where, and the pressures before and after."""
    ewma, src = cycle.state.ewma, cycle.src
    deployment = service = None
    relief = score = src_after = None
    if t is not None and src_fp is not None:
        deployment, service = cycle.replicas.services[int(cycle.replicas.service[t])]
        relief = float(src_fp[cycle.dominant])
        score = relief - MOVE_COST
        src_after = float(np.max(ewma[:, src] - src_fp))
    dst_name = dst_before = dst_after = None
    if dst is not None:
        d, footprint = dst
        dst_name = cycle.nodes.names[d]
        dst_before = float(cycle.pressure[d])
        dst_after = float(np.max(ewma[:, d] + footprint))
    return {
        "replica_id": None if t is None else cycle.replicas.names[t],
        "deployment": deployment,
        "service": service,
        "src": cycle.nodes.names[src],
        "dst": dst_name,
        "dominant": RESOURCES[cycle.dominant],
        "relief": _round(relief),
        "score": _round(score),
        "move_cost": MOVE_COST,
        "src_pressure_before": _round(float(cycle.pressure[src])),
        "dst_pressure_before": _round(dst_before),
        "src_pressure_after": _round(src_after),
        "dst_pressure_after": _round(dst_after),
    }
