"""Filter ``hosts``: a task pinned to a host list runs only there (names of unknown nodes match nothing),
and a task never runs on a node it must avoid (``avoid_nodes``: a drain's replacement avoids the node
being drained)."""

from __future__ import annotations

import numpy as np

from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, Rejection


class Hosts:
    name, category, dynamic = "hosts", Rejection.HOSTS, False

    def applies(self, ctx: TaskContext) -> bool:
        return ctx.task.hosts is not None or bool(ctx.task.avoid_nodes)

    def mask(self, ctx: TaskContext, cols: Cols) -> BoolArray:
        snapshot, task = ctx.snapshot, ctx.task
        if task.hosts is None:
            mask = np.ones(snapshot.n_nodes, dtype=np.bool_)
        else:
            mask = np.zeros(snapshot.n_nodes, dtype=np.bool_)
            mask[[snapshot.node_index[h] for h in task.hosts if h in snapshot.node_index]] = True
        mask[[snapshot.node_index[n] for n in task.avoid_nodes if n in snapshot.node_index]] = False
        return mask[cols]

    def explain(self, ctx: TaskContext, n: int) -> str:
        if ctx.snapshot.nodes[n].name in ctx.task.avoid_nodes:
            return "a node the task must avoid (it is being drained)"
        return f"not one of the task's hosts [{', '.join(ctx.task.hosts or ())}]"
