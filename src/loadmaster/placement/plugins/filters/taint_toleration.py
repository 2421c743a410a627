"""Filter ``taint``: every NoSchedule/NoExecute taint of the node is tolerated by the task.

Toleration matching: omitted operator = Equal; Exists matches any value; an omitted effect matches
every effect; an omitted key with Exists matches every taint; omitted values are "".
"""

from __future__ import annotations

import numpy as np

from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, Rejection


class TaintToleration:
    name, category, dynamic = "taint_toleration", Rejection.TAINT, False

    def applies(self, ctx: TaskContext) -> bool:
        return bool(ctx.snapshot.taints.taints)

    def mask(self, ctx: TaskContext, cols: Cols) -> BoolArray:
        hard, _ = ctx.snapshot.taints.untolerated(ctx.task.tolerations)
        return np.logical_not(hard[cols])

    def explain(self, ctx: TaskContext, n: int) -> str:
        taint = ctx.snapshot.taints.first_untolerated(ctx.task.tolerations, n)
        if taint is None:
            return "untolerated taint"
        return f"untolerated taint {taint.key}={taint.value}:{taint.effect}"
