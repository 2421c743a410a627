"""GPU-aware scorers for GPU clusters (profile ``gpu_pack``), from KAI's ``resourcetype`` and
``gpusharingorder`` plugins. Their goal is to keep whole GPUs, and whole GPU nodes,
free for the work that needs them.

* ``resource_type``: a task that requests no GPU scores 100 on nodes without GPUs and 0 on GPU nodes,
  so CPU-only work stops eating the CPU and memory that GPU nodes' GPUs need.
* ``gpu_share``: a fractional-GPU task scores 100 on a node where it fits on a device that is already
  partly used, 0 where it would have to break into a fully free device.
"""

from __future__ import annotations

import numpy as np

from loadmaster.core.resources import GPU_DEVICE
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer


class ResourceType(Scorer):
    name, normalized = "resource_type", False

    def applies(self, ctx: TaskContext) -> bool:
        return ctx.gpu == 0

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        has_gpu = ctx.snapshot.node_alloc[ctx.snapshot.gpu_row][cols] > 0
        return np.where(has_gpu, 0, 100).astype(np.int64)


class GpuShare(Scorer):
    name, normalized = "gpu_share", False

    def applies(self, ctx: TaskContext) -> bool:
        return 0 < ctx.gpu < GPU_DEVICE

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        devices = ctx.snapshot.state.devices
        used = devices.used[cols]
        free = devices.capacity[cols] - used
        shared_fit = ((used > 0) & (free >= ctx.gpu)).any(axis=1)
        return np.where(shared_fit, 100, 0).astype(np.int64)
