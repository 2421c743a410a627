"""Order ``service_pack`` (a service's ``pack`` mode, JACO C3 with the AVA tie-break; conflict 1).

The replica goes to the feasible node with the fewest active replicas of any service ("replicas pile
onto the lowest-loaded host first"); ties by the AVA 4-level order (fewest of (1) the same job not in
delayed shutdown, (2) the same job in delayed shutdown, (3) other jobs not in, (4) other jobs in
delayed shutdown), then by node name. Counts are live: a replica placed earlier in the cycle counts.
Packed into one key, 12 bits per field (counts capped at 4,095 per node), the engine taking the highest:

    key(n) = ORDER_TOP - (total, same, same_delayed, other, other_delayed) as 5 x 12-bit digits

Local: a placement on node n changes only node n's key, so runs of replicas use the engine's cached
totals (one O(tasks) count per refreshed node, not per node).
"""

from __future__ import annotations

import numpy as np

from loadmaster.core.columns.snapshot import BOUND, PIPELINED
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer
from loadmaster.placement.plugins.scorers.replica_counts import delayed_tasks, same_job_tasks

FIELD_BITS = 12
FIELD_MAX = (1 << FIELD_BITS) - 1
ORDER_TOP = 1 << 62


class ServicePack(Scorer):
    name, normalized, lexicographic = "service_pack", False, True

    def applies(self, ctx: TaskContext) -> bool:
        return True

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        snapshot, state = ctx.snapshot, ctx.snapshot.state
        level = _levels_of_tasks(ctx)
        active = (state.task_phase == BOUND) | (state.task_phase == PIPELINED)
        # One count for the four AVA levels: task -> node * 4 + its level (0..3 in the order's order).
        code = state.task_node[active].astype(np.int64) * 4 + level[active]
        counts = np.bincount(code, minlength=snapshot.n_nodes * 4).reshape(snapshot.n_nodes, 4)
        key: IntArray = np.minimum(counts.sum(axis=1), FIELD_MAX).astype(np.int64)
        for column in range(4):
            key = (key << FIELD_BITS) + np.minimum(counts[:, column], FIELD_MAX)
        ordered: IntArray = (ORDER_TOP - key)[cols]
        return ordered


def _levels_of_tasks(ctx: TaskContext) -> IntArray:
    """Each task's AVA level for the task at hand's job: 0 same job, 1 same job in delayed shutdown,
    2 other job, 3 other job in delayed shutdown (once per snapshot and job name)."""
    snapshot = ctx.snapshot
    job = int(snapshot.task_job[ctx.t])
    key = ("pack_levels", snapshot.jobs[job].name)
    levels = snapshot.memo.get(key)
    if levels is None:
        other = np.ones(snapshot.n_tasks, dtype=np.int64)
        other[same_job_tasks(snapshot, job)] = 0
        levels = snapshot.memo[key] = other * 2 + delayed_tasks(snapshot)
    assert isinstance(levels, np.ndarray)
    return levels
