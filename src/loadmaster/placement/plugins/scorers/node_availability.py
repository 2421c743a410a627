"""Scorer ``node_availability`` (weight 2): 100 if the task fits the node's idle allocatable (and its
ports are not held even by Releasing tasks), 0 if it fits only by using what Releasing tasks will free:
a node where the task can start now beats one where it must wait for an eviction."""

from __future__ import annotations

import numpy as np

from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer
from loadmaster.placement.plugins.filters.host_ports import ports_free
from loadmaster.placement.plugins.filters.resource_fit import fits


def fits_idle(ctx: TaskContext, cols: Cols) -> BoolArray:
    mask = fits(ctx, cols, use_releasing=False)
    if ctx.task.ports:
        mask &= ports_free(ctx, cols, use_releasing=False)
    return mask


class NodeAvailability(Scorer):
    name, normalized = "node_availability", False

    def applies(self, ctx: TaskContext) -> bool:
        # With nothing releasing anywhere every feasible node fits idle: a constant, skip the pass.
        state = ctx.snapshot.state
        return state.releasing_count > 0

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        return np.where(fits_idle(ctx, cols), 100, 0).astype(np.int64)
