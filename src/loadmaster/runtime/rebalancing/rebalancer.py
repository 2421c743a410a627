"""The rebalancer's loop (leader only): fold samples as they arrive, run a cycle at every multiple of
``rebalance_interval``, write its audit entries and start its move.

Cycles run at k·interval on the clock's time (k >= 1 from when the leader started), so a timeline's
cycles fall at 30 s, 60 s, ... of virtual time, and a new leader keeps the same beat. The EWMAs, the hot
streaks and the node cooldowns are leader-local (``controllers.rebalancing.pressure_ewma.PressureState``):
a new leader starts empty and needs two hot cycles again before it moves anything; the replica cooldown comes
from the store (``status.bound_at``). Every sample a node reports is folded when it arrives (a cache
listener), so samples between two cycles all count; the cycle folds the latest one again (a no-op).

Building the columns is the cycle's Python part: node shapes and replica rows are parsed once and kept,
and the replica columns are built again only when a replica changed or a node came or went (samples and
heartbeats alone change neither).

A cycle's audit entries (``rebalance_skipped`` per refused candidate, ``rebalance_moved`` per move) and
its move's start (a make-before-break replacement bound to the destination) are one fenced transaction.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import structlog

from loadmaster.controllers.rebalancing.pressure_ewma import RESOURCES, PressureState, fold_one
from loadmaster.controllers.rebalancing.rebalance import MOVED, Move, RebalanceEvent, rebalance
from loadmaster.controllers.rebalancing.rebalance_inputs import NodeColumns, ReplicaColumns
from loadmaster.manifests import NODE, REPLICA
from loadmaster.manifests.timestamps import parse_timestamp
from loadmaster.runtime.plane.audit import AuditEntry, AuditLog
from loadmaster.runtime.plane.clock import Clock
from loadmaster.runtime.plane.metrics import ControlPlaneMetrics
from loadmaster.runtime.plane.move_ledger import MoveLedger
from loadmaster.runtime.plane.object_cache import Cached, ObjectCache
from loadmaster.runtime.rebalancing.columns import ReplicaRows, node_columns, replica_columns
from loadmaster.store.interface import ConflictError, Fence, FencedError, Op, Store

log = structlog.get_logger(__name__)

ACTOR = "rebalancer"


@dataclass(frozen=True, slots=True)
class RebalanceSettings:
    interval_s: float = 30.0  # rebalance_interval: one cycle at every multiple of it
    heartbeat_interval_s: float = 30.0  # the agents' heartbeat cadence
    node_status_interval_s: float = 30.0  # the agents' pressure sampling cadence (5 s .. 5 min)
    # A voluntary move must run on its destination within this long, or it is given up (the replica
    # stays where it is). The drain's per-replica default: a move is a one-replica drain.
    move_deadline_s: float = 300.0

    @property
    def stale_after_s(self) -> float:
        """A sample older than 3 × max(heartbeat, status interval) is no data (JACO H1)."""
        return 3 * max(self.heartbeat_interval_s, self.node_status_interval_s)

    @property
    def heartbeat_late_after(self) -> timedelta:
        """A node whose last heartbeat is older than two intervals (one missed) is no destination."""
        return timedelta(seconds=2 * self.heartbeat_interval_s)


# What starting a move writes: the ops that create the replacement bound to ``move.dst``.
MoveStarter = Callable[[Move, datetime], Sequence[Op]]


def next_cycle_at(now_s: float, interval_s: float) -> float:
    """The next k·interval strictly after ``now_s``."""
    return (math.floor(now_s / interval_s) + 1) * interval_s


class Rebalancer:
    def __init__(
        self,
        store: Store,
        cache: ObjectCache,
        audit: AuditLog,
        metrics: ControlPlaneMetrics,
        clock: Clock,
        fence: Callable[[], Fence],
        settings: RebalanceSettings,
        start_move: MoveStarter,
        ledger: MoveLedger,
    ) -> None:
        self._store, self._cache, self._audit, self._metrics = store, cache, audit, metrics
        self._clock, self._fence, self.settings, self._start_move = clock, fence, settings, start_move
        self.ledger = ledger
        self.state = PressureState(node_moved_at=ledger.node_moved_at)  # one cooldown map for both loops
        self._gauged: set[str] = set()
        self._rows = ReplicaRows()  # parsed replicas, kept between cycles
        self._shapes: dict[Any, dict[str, int]] = {}  # parsed node shapes, kept between cycles
        # The last replica columns with what they use per node (requested, other resources used).
        self._last_replicas: tuple[ReplicaColumns, np.ndarray, dict[str, np.ndarray]] | None = None
        self._replicas_changed = True
        cache.add_listener(self._on_change)

    def close(self) -> None:
        self._cache.remove_listener(self._on_change)

    def _on_change(self, kind: str, name: str, before: Cached | None, after: Cached | None) -> None:
        if kind == REPLICA or (kind == NODE and (before is None or after is None)):
            self._replicas_changed = True  # a replica, or which nodes there are (their positions)
        if kind != NODE or after is None:
            return
        sample = after.obj.get("status", {}).get("pressure")
        previous = None if before is None else before.obj.get("status", {}).get("pressure")
        if isinstance(sample, dict) and sample != previous:
            at = parse_timestamp(sample["at"]).timestamp()
            fold_one(self.state, name, float(sample["cpu"]), float(sample["memory"]), at)

    async def run(self) -> None:
        while True:
            now_s = self._clock.now().timestamp()
            await self._clock.sleep(next_cycle_at(now_s, self.settings.interval_s) - now_s)
            try:
                await self.cycle_once()
            except FencedError:
                raise  # leadership lost: the term ends
            except ConflictError as error:
                # The replica changed between the decision and the write: nothing was written (one
                # transaction); the next cycle decides again from what is stored.
                log.info("rebalance write conflicted; the next cycle decides again", error=str(error))
            except Exception as error:  # a failing cycle must not end the leader's term
                self._metrics.failures.labels(reason="rebalance_error").inc()
                log.exception("rebalance cycle failed", error=f"{type(error).__name__}: {error}")

    async def cycle_once(self) -> list[Move]:
        """One cycle now: decide, then write the audit entries and the move's start together."""
        now = self._clock.now()
        # Parsing 5,000 nodes and 10,000 replicas into columns takes ~0.5 s: in a worker thread, over
        # copies of the cache's tables (the cache replaces a changed object, never edits one in place).
        stored_nodes, stored_replicas = dict(self._cache.objects[NODE]), dict(self._cache.objects[REPLICA])
        rebuild, self._replicas_changed = self._replicas_changed, False
        try:
            nodes, replicas = await asyncio.to_thread(
                self._columns, stored_nodes, stored_replicas, now, rebuild
            )
        except BaseException:
            self._replicas_changed |= rebuild  # the columns were not rebuilt: the next cycle does it
            raise
        moves, events, self.state = rebalance(
            nodes, replicas, self.state, now.timestamp(), stale_after_s=self.settings.stale_after_s
        )
        self._gauge_pressure()
        self._refresh_ledger(nodes.can_receive, nodes.sample_at, now.timestamp())
        if not events:
            return moves
        ops: list[Op] = []
        for move in list(moves):
            started = self._start_move(move, now)
            if not started:  # the replica changed since the cache was read: no move, no entry
                moves.remove(move)
                events.remove(move.event)
                if self.state.node_moved_at.get(move.dst) == now.timestamp():
                    del self.state.node_moved_at[move.dst]
            ops.extend(started)
        if not events:
            return moves
        ops.extend(self._audit.ops([_entry(event) for event in events]))
        await self._store.txn(ops, self._fence())
        for event in events:
            if event.type == MOVED:
                self._metrics.rebalance_moves.inc()
            else:
                self._metrics.rebalance_skips.labels(reason=event.payload["reason"]).inc()
        if moves:
            log.info("rebalance move", **{k: v for k, v in moves[0].event.payload.items() if v is not None})
        return moves

    def _columns(
        self,
        stored_nodes: dict[str, Cached],
        stored_replicas: dict[str, Cached],
        now: datetime,
        rebuild: bool,
    ) -> tuple[NodeColumns, ReplicaColumns]:
        """(In a worker thread, one cycle at a time: it alone touches the memos.)"""
        columns = node_columns(stored_nodes, now, self.settings.heartbeat_late_after, self._shapes)
        return columns, self._replica_columns(columns, stored_replicas, rebuild)

    def _replica_columns(
        self, nodes: NodeColumns, stored: dict[str, Cached], rebuild: bool
    ) -> ReplicaColumns:
        """The replica columns, and what the replicas use on each node (into ``nodes``): built again
        only when a replica changed or a node came or went since the last cycle, else the last ones."""
        if rebuild or self._last_replicas is None:
            allocatable_other = {k: v.copy() for k, v in nodes.other_free.items()}
            replicas = replica_columns(stored, nodes, self._rows)
            other_used = {k: allocatable_other[k] - v for k, v in nodes.other_free.items()}
            self._last_replicas = (replicas, nodes.requested.copy(), other_used)
            return replicas
        replicas, requested, other_used = self._last_replicas
        nodes.requested[:] = requested
        for resource, used in other_used.items():
            if resource in nodes.other_free:
                np.subtract(nodes.other_free[resource], used, out=nodes.other_free[resource])
        return replicas

    def _refresh_ledger(self, can_receive: np.ndarray, sample_at: np.ndarray, now_s: float) -> None:
        """Hand consolidation the fresh EWMAs and the nodes that may receive nothing."""
        state = self.state
        fresh = ~np.isnan(state.ewma[0]) & (
            now_s - np.nan_to_num(sample_at, nan=-np.inf) <= self.settings.stale_after_s
        )
        pressure = {
            name: (float(state.ewma[0, i]), float(state.ewma[1, i]))
            for i, name in enumerate(state.nodes)
            if fresh[i]
        }
        self.ledger.refresh(pressure, (name for i, name in enumerate(state.nodes) if not can_receive[i]))

    def _gauge_pressure(self) -> None:
        """loadmaster_node_pressure{node, resource}: the EWMAs of the nodes with data."""
        state, seen = self.state, set()
        for i, name in enumerate(state.nodes):
            if math.isnan(state.ewma[0, i]):
                continue
            seen.add(name)
            for r, resource in enumerate(RESOURCES):
                self._metrics.node_pressure.labels(node=name, resource=resource).set(float(state.ewma[r, i]))
        for gone in self._gauged - seen:
            for resource in RESOURCES:
                self._metrics.node_pressure.remove(gone, resource)
        self._gauged = seen


def _entry(event: RebalanceEvent) -> AuditEntry:
    payload = event.payload
    if event.type == MOVED:
        message = (
            f"moving {payload['replica_id']} from {payload['src']} to {payload['dst']}: "
            f"relief {payload['relief']} of {payload['dominant']}"
        )
    elif event.replica is None:
        message = f"{payload['src']} is hot but none of its replicas may move ({payload['reason']})"
    else:
        message = f"{payload['replica_id']} stays on {payload['src']}: {payload['reason']}"
    target = f"replicas/{event.replica}" if event.replica else f"nodes/{payload['src']}"
    return AuditEntry(event.type, ACTOR, target, message, dict(payload))
