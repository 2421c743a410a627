"""Filter ``gpu_model``: a task that requests GPUs and lists accepted models runs only on nodes whose
GPU model is in the list (a node without ``gpu_model`` matches no list), as the openb trace's
``gpu_spec`` column asks."""

from __future__ import annotations

import numpy as np

from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, Rejection


class GpuModel:
    name, category, dynamic = "gpu_model", Rejection.GPU_MODEL, False

    def applies(self, ctx: TaskContext) -> bool:
        return (ctx.gpu > 0 or ctx.gpu_all) and ctx.task.gpu_models is not None

    def mask(self, ctx: TaskContext, cols: Cols) -> BoolArray:
        snapshot = ctx.snapshot
        accepted = frozenset(ctx.task.gpu_models or ())
        key = ("gpu_model", accepted)
        mask = snapshot.memo.get(key)
        if mask is None:
            mask = np.array([node.gpu_model in accepted for node in snapshot.nodes], dtype=np.bool_)
            snapshot.memo[key] = mask
        assert isinstance(mask, np.ndarray)
        return mask[cols]

    def explain(self, ctx: TaskContext, n: int) -> str:
        model = ctx.snapshot.nodes[n].gpu_model
        accepted = ", ".join(ctx.task.gpu_models or ())
        return (
            f"gpu model {model} not in [{accepted}]"
            if model
            else f"node has no gpu model (wants [{accepted}])"
        )
