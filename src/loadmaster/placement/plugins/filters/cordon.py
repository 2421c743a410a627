"""Filter ``unschedulable``: a cordoned node takes nothing new, unless the task tolerates the implied
taint ``node.kubernetes.io/unschedulable:NoSchedule``."""

from __future__ import annotations

import numpy as np

from loadmaster.core.columns.taints import CORDON_TAINT, tolerates
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, Rejection


class Cordon:
    name, category, dynamic = "cordon", Rejection.UNSCHEDULABLE, False

    def applies(self, ctx: TaskContext) -> bool:
        return not tolerates(ctx.task.tolerations, CORDON_TAINT)

    def mask(self, ctx: TaskContext, cols: Cols) -> BoolArray:
        return np.logical_not(ctx.snapshot.node_unschedulable[cols])

    def explain(self, ctx: TaskContext, n: int) -> str:
        return "node is cordoned (unschedulable)"
