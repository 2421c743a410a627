"""Filter ``hosts``: a task pinned to a host list runs only there (names of unknown nodes match nothing)."""

from __future__ import annotations

import numpy as np

from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, Rejection


class Hosts:
    name, category, dynamic = "hosts", Rejection.HOSTS, False

    def applies(self, ctx: TaskContext) -> bool:
        return ctx.task.hosts is not None

    def mask(self, ctx: TaskContext, cols: Cols) -> BoolArray:
        snapshot = ctx.snapshot
        mask = np.zeros(snapshot.n_nodes, dtype=np.bool_)
        index = [snapshot.node_index[h] for h in ctx.task.hosts or () if h in snapshot.node_index]
        mask[index] = True
        return mask[cols]

    def explain(self, ctx: TaskContext, n: int) -> str:
        return f"not one of the task's hosts [{', '.join(ctx.task.hosts or ())}]"
