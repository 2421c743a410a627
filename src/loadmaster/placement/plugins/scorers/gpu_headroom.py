"""Scorer ``gpu_headroom`` (profile ``gpu_pack``): do not let a GPU node's cpu or memory run out ahead of
its GPUs.

A GPU node whose cpu (or memory) is used up while GPUs are free strands those GPUs: no GPU task fits there
any more. With the node's allocated fractions after the placement, ``f_r = min(1, req_r / alloc_r)``
(``req_r`` = requests of tasks Running or Pipelined on the node + the task's, as the strategy scores count
them):

    score = floor(100 - 100 * max(0, f_cpu - f_gpu, f_memory - f_gpu))

so a cpu-heavy task goes where cpu is plentiful for the GPUs left (and cpu-only work, when it must use a
GPU node, goes where the GPUs are already taken). One-sided on purpose: GPUs running out ahead of cpu
strand only cpu, and penalising that would spread GPU-heavy tasks over fresh nodes, breaking up the
whole nodes multi-GPU tasks need (``balanced`` did that on the openb trace). Only the difference counts,
not how full the node is. Nodes without GPUs score 100.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.core.resources import CPU, GPU, MEMORY
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer

FloatArray = npt.NDArray[np.float64]

# floor() of a float that should be a whole number: 0.29 * 100 is 28.999..., so nudge before flooring.
FLOOR_EPSILON = 1e-9


class GpuHeadroom(Scorer):
    name, normalized = "gpu_headroom", False

    def applies(self, ctx: TaskContext) -> bool:
        return True

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        snapshot = ctx.snapshot
        rows, alloc, has_gpu = _node_terms(snapshot)
        fraction = snapshot.state.node_used[rows][:, cols] + ctx.request[rows, None]
        fraction = np.minimum(1.0, fraction / alloc[:, cols])
        cpu, memory, gpu = fraction
        ahead = np.maximum(0.0, np.maximum(cpu, memory) - gpu)
        score = np.floor(100.0 - 100.0 * ahead + FLOOR_EPSILON)
        return np.asarray(np.where(has_gpu[cols], score, 100), dtype=np.int64)


def _node_terms(snapshot: ClusterSnapshot) -> tuple[IntArray, FloatArray, BoolArray]:
    """The cpu, memory and gpu rows, the allocatable on them as divisors (0 -> 1), and which nodes have
    GPUs: once per snapshot, since none of them changes during a cycle."""
    terms = snapshot.memo.get(("gpu_headroom",))
    if terms is None:
        index = snapshot.res_index
        rows = np.array([index[CPU], index[MEMORY], index[GPU]], dtype=np.int64)
        alloc = snapshot.node_alloc[rows].astype(np.float64)
        terms = snapshot.memo[("gpu_headroom",)] = (rows, np.maximum(alloc, 1.0), alloc[2] > 0)
    assert isinstance(terms, tuple)
    return terms
