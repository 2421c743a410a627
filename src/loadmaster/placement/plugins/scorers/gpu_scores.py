"""Scorer ``resource_type`` (profile ``gpu_pack``), from KAI's ``resourcetype`` plugin: a task that
requests no GPU scores 100 on nodes without GPUs and 0 on GPU nodes, so CPU-only work stops eating the
CPU and memory that GPU nodes' GPUs need.
"""

from __future__ import annotations

import numpy as np

from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer


class ResourceType(Scorer):
    name, normalized = "resource_type", False

    def applies(self, ctx: TaskContext) -> bool:
        return ctx.gpu == 0

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        has_gpu = ctx.snapshot.node_alloc[ctx.snapshot.gpu_row][cols] > 0
        return np.where(has_gpu, 0, 100).astype(np.int64)
