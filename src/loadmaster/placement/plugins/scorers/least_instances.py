"""Order ``least_instances`` (the seeds' 4-level host order): fewest tasks of (1) the same job not in
delayed shutdown, then (2) the same job in delayed shutdown, then (3) other jobs not in, then (4) other
jobs in delayed shutdown; then node name. Counts are tasks Running or Pipelined (incl. ones placed
earlier in the cycle); Releasing tasks do not count.

This is a lexicographic order, not a 0..100 score: the four counts are packed into one integer key
(15 bits each) and the engine takes the node with the highest ``ORDER_TOP - key``.
"""

from __future__ import annotations

import numpy as np

from loadmaster.core.columns.snapshot import BOUND, PIPELINED
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer
from loadmaster.placement.plugins.scorers.replica_counts import delayed_tasks

FIELD_BITS = 15  # counts up to 32767 tasks of one kind on one node
ORDER_TOP = 1 << 62


class LeastInstances(Scorer):
    name, normalized, lexicographic = "least_instances", False, True

    def applies(self, ctx: TaskContext) -> bool:
        return True

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        snapshot, state = ctx.snapshot, ctx.snapshot.state
        delayed = delayed_tasks(snapshot)
        active = (state.task_phase == BOUND) | (state.task_phase == PIPELINED)
        same_job = snapshot.task_job == snapshot.task_job[ctx.t]
        n = snapshot.n_nodes

        def count(mask: np.ndarray) -> IntArray:
            return np.bincount(state.task_node[active & mask], minlength=n).astype(np.int64)

        levels = (count(same_job & ~delayed), count(same_job & delayed), count(~same_job & ~delayed),
                  count(~same_job & delayed))  # fmt: skip
        key = np.zeros(n, dtype=np.int64)
        for level in levels:
            key = (key << FIELD_BITS) + np.minimum(level, (1 << FIELD_BITS) - 1)
        return (ORDER_TOP - key)[cols]
