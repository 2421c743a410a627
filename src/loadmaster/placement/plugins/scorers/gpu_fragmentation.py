"""Scorer ``gpu_fragmentation`` (profile ``gpu_pack``): place a task where it fragments GPUs least.

``dF`` = how much the node's expected fragmented GPU capacity grows if the task goes there
(``placement/gpu_fragmentation.py``: FGD's measure over the workload's shapes, with their cpu and memory):
the expected usable capacity the placement destroys, minus the GPU the task itself takes. With
``unit = max(task gpu, 1 GPU)``:

    score = floor(50 - 50 * dF / unit), clamped to 0..100

A placement that fills capacity no shape could use (dF = -unit) scores 100; one that turns as much usable
capacity into used as it takes (dF = 0) scores 50; one that also strands a unit of usable capacity
(dF = +unit) scores 0. Relative to the task's size, so the scorer's weight means the same for a 0.2-GPU
task and for an 8-GPU one.

A task that asks for no GPU still changes ``dF`` through the cpu and memory it takes from a GPU node
(cpu-only work on a GPU node can strand its GPUs); on a node without GPUs every task scores 50.

Local (a placement on node n changes only node n's score): the engine caches its totals per class.
Infeasible nodes are not scored (they score 0; the engine never picks them).
"""

from __future__ import annotations

import numpy as np

from loadmaster.core.resources import CPU, GPU_DEVICE, MEMORY
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer
from loadmaster.placement.gpu_fragmentation import (
    ShapeTable,
    after_share,
    after_whole,
    capacity_by_size,
    expected_usable,
    free_cpu_memory,
    free_devices,
)
from loadmaster.placement.gpu_usable_cache import UsableCache

NEUTRAL = 50  # the score of a placement that changes no node's fragmentation
# Up to this many nodes, their ``before`` is computed on the spot rather than read from the per-node
# cache (``gpu_usable_cache.py``), whose refresh costs a look at the change log per call: the engine
# re-scores one node after each placement, and a class a few nodes at a time.
FEW_NODES = 16
# Above every device's free: where a share cannot go (an infeasible node, never picked).
NO_DEVICE = np.iinfo(np.int64).max
# floor() of a float that may sit a rounding error below a whole number: nudge it up first.
FLOOR_EPSILON = 1e-6


class GpuFragmentation(Scorer):
    name, normalized = "gpu_fragmentation", False

    def applies(self, ctx: TaskContext) -> bool:
        snapshot = ctx.snapshot
        applies = snapshot.memo.get(("gpu_fragmentation_applies",))
        if applies is None:  # any GPU in the cluster, and any GPU shape to measure against
            has_gpus = bool((snapshot.state.devices.capacity > 0).any())
            applies = snapshot.memo[("gpu_fragmentation_applies",)] = (
                has_gpus and not ShapeTable.of(snapshot).is_empty
            )
        return bool(applies)

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        out = np.zeros(feasible.size, dtype=np.int64)
        nodes = np.flatnonzero(feasible) if isinstance(cols, slice) else cols[feasible]
        if nodes.size:
            out[feasible] = self._score(ctx, nodes)
        return out

    def _score(self, ctx: TaskContext, nodes: IntArray) -> IntArray:
        snapshot, table = ctx.snapshot, ShapeTable.of(ctx.snapshot)
        cpu, memory = free_cpu_memory(snapshot, nodes)
        few = nodes.size <= FEW_NODES
        free = free_devices(snapshot, nodes) if few or 0 < ctx.gpu < GPU_DEVICE else None
        if free is not None and few:
            before = capacity_by_size(free, table.sizes)
            usable_before = expected_usable(table, before, cpu, memory, nodes)
        else:
            cache = UsableCache.of(snapshot)
            before, usable_before = cache.capacity[:, nodes], cache.usable[nodes]
        if ctx.gpu >= GPU_DEVICE:
            taken = ctx.gpu // GPU_DEVICE * GPU_DEVICE
            after = after_whole(before, taken // GPU_DEVICE)
        elif ctx.gpu > 0:
            assert free is not None
            # the device the share goes to: the most used one where it fits (devices.py)
            taken_from = np.where(free >= ctx.gpu, free, NO_DEVICE).min(axis=1)
            taken, after = ctx.gpu, after_share(before, ctx.gpu, taken_from, table.sizes)
        else:
            taken, after = 0, before
        index = snapshot.res_index
        cpu_after, memory_after = cpu - ctx.request[index[CPU]], memory - ctx.request[index[MEMORY]]
        lost = usable_before - expected_usable(table, after, cpu_after, memory_after, nodes)
        unit = max(taken, GPU_DEVICE)
        score = np.floor(NEUTRAL + (taken - lost.astype(np.float64)) * (NEUTRAL / unit) + FLOOR_EPSILON)
        return np.asarray(np.clip(score, 0, 100), dtype=np.int64)
