"""Scorer ``gpu_balance`` (profile ``gpu_pack``): keep a GPU node's cpu and memory in step with its GPUs.

A GPU node whose cpu (or memory) runs out while GPUs are free strands those GPUs: no GPU task fits there
any more. One whose GPUs run out first strands cpu, which cpu-only work can still use. With the node's
allocated fractions after the placement, ``f_r = min(1, req_r / alloc_r)`` (``req_r`` = requests of tasks
Running or Pipelined on the node + the task's, as the strategy scores count them):

    d = f_cpu - f_gpu,  e = f_memory - f_gpu
    score = floor(100 - 37.5 * |d| - 25 * max(0, d, e))

The symmetric term keeps cpu and GPU in step (like ``balanced``, over the two resources GPU work runs
out of); the one-sided term adds the cost of cpu or memory running ahead of the GPUs, which strands
GPUs. Only differences count, not how full the node is: a node half full in step scores like an empty
one, so tasks are not spread over fresh nodes for balance's sake (on the openb trace, ``balanced``'s
preference for empty nodes broke up the whole 8-GPU nodes that 8-GPU tasks need). Nodes without GPUs
score 100. Chosen on bench/placement.py's openb figures (docs/decisions.md).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from loadmaster.core.resources import CPU, GPU, MEMORY
from loadmaster.core.snapshot import ClusterSnapshot
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray

FloatArray = npt.NDArray[np.float64]

IN_STEP_COST = 37.5  # per unit of |f_cpu - f_gpu|
AHEAD_COST = 25.0  # per unit of cpu or memory allocated ahead of the GPUs
# floor() of a float that should be a whole number: 0.29 * 100 is 28.999..., so nudge before flooring.
FLOOR_EPSILON = 1e-9


class GpuBalance:
    name, normalized = "gpu_balance", False

    def applies(self, ctx: TaskContext) -> bool:
        return True

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        snapshot = ctx.snapshot
        rows, per_alloc, has_gpu = _node_terms(snapshot)
        fraction = snapshot.state.node_used[rows][:, cols] + ctx.request[rows, None]
        fraction = np.minimum(1.0, fraction * per_alloc[:, cols])
        cpu, memory, gpu = fraction
        step = cpu - gpu
        ahead = np.maximum(0.0, np.maximum(step, memory - gpu))
        score = np.floor(100.0 - IN_STEP_COST * np.abs(step) - AHEAD_COST * ahead + FLOOR_EPSILON)
        return np.asarray(np.where(has_gpu[cols], score, 100), dtype=np.int64)


def _node_terms(snapshot: ClusterSnapshot) -> tuple[IntArray, FloatArray, BoolArray]:
    """The cpu, memory and gpu rows, 1 / allocatable on them, and which nodes have GPUs (once per
    snapshot: none of them changes during a cycle)."""
    terms = snapshot.memo.get(("gpu_balance",))
    if terms is None:
        index = snapshot.res_index
        rows = np.array([index[CPU], index[MEMORY], index[GPU]], dtype=np.int64)
        alloc = snapshot.node_alloc[rows].astype(np.float64)
        terms = snapshot.memo[("gpu_balance",)] = (rows, 1.0 / np.maximum(alloc, 1.0), alloc[2] > 0)
    assert isinstance(terms, tuple)
    return terms
