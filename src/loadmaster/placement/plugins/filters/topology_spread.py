"""Topology spread: hard (DoNotSchedule) as filter ``topology``, soft (ScheduleAnyway) as a scorer.

Domains are the values of ``topology_key`` on nodes that pass the task's node selector and carry the
key. ``count(d)`` = tasks Running or Pipelined in ``d`` whose labels match the constraint's selector.

* Hard: node ``n`` in domain ``d`` is feasible iff
  ``count(d) + (1 if the task matches its own selector) - min_d count(d) <= max_skew``;
  nodes without the key are infeasible.
* Soft: ``raw(n) = sum over ScheduleAnyway constraints of count(domain(n))``;
  ``score = 100 - raw*100 // max_raw`` over feasible nodes carrying every soft key (100 everywhere
  when ``max_raw = 0``); a node lacking a soft constraint's key scores 0.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from loadmaster.core.columns.labels import ABSENT
from loadmaster.core.columns.snapshot import BOUND, PIPELINED
from loadmaster.core.model import TopologySpreadConstraint
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Rejection, Scorer


def _matching_tasks(ctx: TaskContext, constraint: TopologySpreadConstraint) -> BoolArray:
    snapshot = ctx.snapshot
    key = ("spread_selector", constraint.label_selector)
    cached = snapshot.memo.get(key)
    if cached is None:
        selector = constraint.label_selector
        cached = np.array([selector.matches(task.labels) for task in snapshot.tasks], dtype=np.bool_)
        snapshot.memo[key] = cached
    assert isinstance(cached, np.ndarray)
    return cached


def domain_counts(
    ctx: TaskContext, constraint: TopologySpreadConstraint
) -> tuple[npt.NDArray[np.int32], IntArray]:
    """(domain code of every node, ABSENT where ineligible; matching-task count of every node's domain)."""
    snapshot, state = ctx.snapshot, ctx.snapshot.state
    codes = snapshot.labels.codes(constraint.topology_key)
    if codes is None:
        return np.full(snapshot.n_nodes, ABSENT, dtype=np.int32), np.zeros(snapshot.n_nodes, dtype=np.int64)
    eligible = (codes != ABSENT) & snapshot.labels.match_pairs(ctx.task.node_selector.items())
    domains = np.where(eligible, codes, ABSENT).astype(np.int32)
    active = (state.task_phase == BOUND) | (state.task_phase == PIPELINED)
    per_node = np.bincount(
        state.task_node[active & _matching_tasks(ctx, constraint)], minlength=snapshot.n_nodes
    )
    width = int(codes.max(initial=0)) + 1
    per_domain = np.bincount(domains[eligible], weights=per_node[eligible], minlength=width).astype(np.int64)
    node_count = np.where(eligible, per_domain[np.maximum(domains, 0)], 0)
    return domains, node_count


def _min_domain_count(domains: npt.NDArray[np.int32], node_count: IntArray) -> int:
    present = domains != ABSENT
    return int(node_count[present].min()) if present.any() else 0


class TopologySpread:
    name, category, dynamic = "topology_spread", Rejection.TOPOLOGY, True

    def applies(self, ctx: TaskContext) -> bool:
        return any(c.when_unsatisfiable == "DoNotSchedule" for c in ctx.task.topology_spread_constraints)

    def _hard(self, ctx: TaskContext) -> list[TopologySpreadConstraint]:
        return [c for c in ctx.task.topology_spread_constraints if c.when_unsatisfiable == "DoNotSchedule"]

    def mask(self, ctx: TaskContext, cols: Cols) -> BoolArray:
        mask = np.ones(ctx.snapshot.n_nodes, dtype=np.bool_)
        for constraint in self._hard(ctx):
            domains, count = domain_counts(ctx, constraint)
            own = 1 if constraint.label_selector.matches(ctx.task.labels) else 0
            skew = count + own - _min_domain_count(domains, count)
            mask &= (domains != ABSENT) & (skew <= constraint.max_skew)
        return mask[cols]

    def explain(self, ctx: TaskContext, n: int) -> str:
        for constraint in self._hard(ctx):
            domains, count = domain_counts(ctx, constraint)
            if domains[n] == ABSENT:
                return f"node lacks topology key {constraint.topology_key}"
            own = 1 if constraint.label_selector.matches(ctx.task.labels) else 0
            skew = int(count[n]) + own - _min_domain_count(domains, count)
            if skew > constraint.max_skew:
                key, limit = constraint.topology_key, constraint.max_skew
                return f"topology spread {key}: skew would be {skew} > max_skew {limit}"
        return "topology spread violated"


class SoftTopologySpread(Scorer):
    name, normalized = "soft_topology_spread", True

    def applies(self, ctx: TaskContext) -> bool:
        return any(c.when_unsatisfiable == "ScheduleAnyway" for c in ctx.task.topology_spread_constraints)

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        raw = np.zeros(ctx.snapshot.n_nodes, dtype=np.int64)
        keyed = np.ones(ctx.snapshot.n_nodes, dtype=np.bool_)
        for constraint in ctx.task.topology_spread_constraints:
            if constraint.when_unsatisfiable == "ScheduleAnyway":
                domains, count = domain_counts(ctx, constraint)
                raw += count
                keyed &= domains != ABSENT
        candidates = feasible & keyed
        max_raw = int(raw[candidates].max(initial=0))
        if max_raw == 0:
            return np.where(keyed, 100, 0).astype(np.int64)[cols]
        return np.where(keyed, 100 - raw * 100 // max_raw, 0).astype(np.int64)[cols]
