"""Scorer ``prefer_no_schedule`` (weight 3): raw = PreferNoSchedule taints the task does not tolerate;
``score = 100 - raw*100 // max_raw`` over feasible nodes (100 everywhere when max_raw = 0)."""

from __future__ import annotations

import numpy as np

from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer


class PreferNoSchedule(Scorer):
    name, normalized = "prefer_no_schedule", True

    def applies(self, ctx: TaskContext) -> bool:
        return bool(ctx.snapshot.taints.taints)

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        _, raw = ctx.snapshot.taints.untolerated(ctx.task.tolerations)
        max_raw = int(raw[feasible].max(initial=0))
        if max_raw == 0:
            return np.full(ctx.snapshot.n_nodes, 100, dtype=np.int64)[cols]
        return (100 - raw * 100 // max_raw)[cols]
