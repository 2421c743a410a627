"""Scorer ``load_balance`` (``lablet``): fewer tasks on the node scores higher.
``N = 100 - 100 * t_n // max over feasible nodes of t`` (100 everywhere when that max is 0), with
t = tasks Running or Pipelined on the node."""

from __future__ import annotations

import numpy as np

from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer


class LoadBalance(Scorer):
    name, normalized = "load_balance", True

    def applies(self, ctx: TaskContext) -> bool:
        return True

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        tasks = ctx.snapshot.state.node_tasks
        max_tasks = int(tasks[feasible].max(initial=0))
        if max_tasks == 0:
            return np.full(ctx.snapshot.n_nodes, 100, dtype=np.int64)[cols]
        return (100 - 100 * tasks // max_tasks)[cols]
