"""Scorer ``gpu_midfill_spread`` (profile ``gpu_pack``, weight 1/8): while the cluster is under 50 % and at
least 35 % free, GPU tasks lean a little toward the nodes with the most GPU left.

With the node's GPU allocatable ``A`` and free GPU ``G`` (milli-GPU, before the task), for a task asking
``g``:

    score = floor(100 * max(0, G - g) / A)          (least allocated GPU; 0 on nodes without GPUs)

It applies to tasks that request GPUs, and only while the cluster's free GPU share
``f = sum(G) / sum(A)`` is in ``[FREE_PERCENT_LOW %, FREE_PERCENT_HIGH %)``; otherwise
``gpu_fragmentation`` alone decides. Why, measured on the Alibaba openb traces (bench/placement.py,
docs/decisions.md "issue 18, session 7"): a task left waiting counts as one whatever its size, and near
the end of a fill the GPUs a late 8-GPU task takes on a whole node would have held the ten or so small
tasks that arrive after it and find no device. Breaking a few whole nodes while half the cluster is
still free lets late big tasks wait instead of many small ones: openb default in file order places
99.7 % of the pods (99.3 % without it, 98.9 % before the per-task shape weights; GPU allocated 95.5 %
against 95.6 % and 95.7 %). Applied from the start, the same term broke up the nodes of rare GPU models
that pinned tasks need (gpuspec33 fell below first fit); applied to the end, it spread the last small
tasks over the few devices still whole, where packing them leaves fewer fragments. The weight (1/8
against ``gpu_fragmentation``'s 2) only breaks ties within a few points of fragmentation.

The window depends on the whole cluster, the score on the node alone: the engine's cached totals are
keyed by the scorers that apply, so crossing a bound re-evaluates them, and within the window the
scorer is local (a placement on node n changes only node n's score). A run of identical tasks placed
together (``PlacementEngine.choose_many``) is split where a task of the run would cross a bound
(``steady_for``), so it places each task as placing them one at a time would.
"""

from __future__ import annotations

import numpy as np

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer

# The cluster's free GPU share in which the scorer applies, in percent (compared in integers): [LOW, HIGH).
FREE_PERCENT_HIGH = 50
FREE_PERCENT_LOW = 35


class GpuMidfillSpread(Scorer):
    name, normalized = "gpu_midfill_spread", False

    def applies(self, ctx: TaskContext) -> bool:
        if ctx.gpu <= 0:
            return False
        total, free = _total_and_free(ctx.snapshot)
        return total > 0 and FREE_PERCENT_LOW * total <= 100 * free < FREE_PERCENT_HIGH * total

    def steady_for(self, ctx: TaskContext, count: int) -> int:
        """How many of ``count`` identical tasks, from ``ctx``'s on, get the same ``applies``. Each one
        placed takes its ``g`` from the free GPU ``F`` (of ``T``), so task ``j`` of the run sees
        ``F - j g``; above the bound ``B`` (HIGH or LOW percent of ``T``) it is on the same side while
        ``100 (F - j g) >= B``, i.e. for ``j = 0 .. floor((100 F - B) / (100 g))``. Below LOW: all."""
        if ctx.gpu <= 0:
            return count
        total, free = _total_and_free(ctx.snapshot)
        if total <= 0 or 100 * free < FREE_PERCENT_LOW * total:
            return count
        bound = (FREE_PERCENT_HIGH if 100 * free >= FREE_PERCENT_HIGH * total else FREE_PERCENT_LOW) * total
        return min(count, (100 * free - bound) // (100 * ctx.gpu) + 1)

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        capacity = _node_capacity(ctx.snapshot)[cols]
        free = capacity - ctx.snapshot.state.devices.used[cols].sum(axis=1)
        left = np.maximum(free - ctx.gpu, 0)
        return np.asarray(np.where(capacity > 0, left * 100 // np.maximum(capacity, 1), 0), dtype=np.int64)


def _total_and_free(snapshot: ClusterSnapshot) -> tuple[int, int]:
    """The cluster's GPU capacity and what of it is free now (milli-GPU)."""
    total = int(_node_capacity(snapshot).sum())
    return total, total - int(snapshot.state.devices.used.sum())


def _node_capacity(snapshot: ClusterSnapshot) -> IntArray:
    """Each node's GPU capacity (milli-GPU, the sum of its devices): once per snapshot, it never changes."""
    capacity = snapshot.memo.get(("gpu_node_capacity",))
    if capacity is None:
        capacity = snapshot.memo[("gpu_node_capacity",)] = snapshot.state.devices.capacity.sum(axis=1)
    assert isinstance(capacity, np.ndarray)
    return capacity
