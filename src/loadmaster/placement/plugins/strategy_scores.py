"""The strategy scores (weight 1 in ``default``): binpack, spread and balanced.

Rows scored: cpu, memory and every other resource the task requests, skipping (per node) resources
whose allocatable is 0. ``req_r`` = requests of tasks Running or Pipelined on the node + the task's;
Releasing requests are not counted (what they free counts as free). For binpack and spread, a task
that omits cpu counts as 100m and one that omits memory as 200Mi (kube-scheduler's non-zero rule),
for the task being placed and the tasks already there. Integer arithmetic, truncating division:

* binpack (most allocated): ``s_r = min(req, alloc)*100 // alloc``; score = ``sum(s_r) // count``
* spread (least allocated): ``s_r = (alloc - req)*100 // alloc`` (0 if req > alloc); same mean
* balanced: over cpu, memory (and gpu if requested), as written:
  ``f_r = min(1, req_r / alloc_r)``; score = ``floor((1 - std(f))*100)``, population std
"""

from __future__ import annotations

import numpy as np

from loadmaster.core.resources import CPU, GPU, MEMORY
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray

# floor((1 - std)*100) computed in floating point: 0.93*100 is 92.999..., so nudge before flooring.
FLOOR_EPSILON = 1e-9


def _requested_and_alloc(ctx: TaskContext, cols: Cols, rows: np.ndarray, nonzero: bool) -> tuple[IntArray, IntArray]:
    snapshot = ctx.snapshot
    used = snapshot.state.node_used_nz if nonzero else snapshot.state.node_used
    request = ctx.request_nz if nonzero else ctx.request
    alloc = snapshot.node_alloc[rows][:, cols]
    requested = used[rows][:, cols] + request[rows, None]
    return requested, alloc


def _mean_over_valid(per_resource: IntArray, valid: BoolArray) -> IntArray:
    count = valid.sum(axis=0)
    total = np.where(valid, per_resource, 0).sum(axis=0)
    return np.where(count > 0, total // np.maximum(count, 1), 0).astype(np.int64)


def binpack_score(ctx: TaskContext, cols: Cols) -> IntArray:
    requested, alloc = _requested_and_alloc(ctx, cols, ctx.score_rows, nonzero=True)
    valid = alloc > 0
    per = np.minimum(requested, alloc) * 100 // np.where(valid, alloc, 1)
    return _mean_over_valid(per, valid)


class Binpack:
    name, normalized = "binpack", False

    def applies(self, ctx: TaskContext) -> bool:
        return True

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        return binpack_score(ctx, cols)


class Spread:
    name, normalized = "spread", False

    def applies(self, ctx: TaskContext) -> bool:
        return True

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        requested, alloc = _requested_and_alloc(ctx, cols, ctx.score_rows, nonzero=True)
        valid = alloc > 0
        per = np.where(requested > alloc, 0, (alloc - requested) * 100 // np.where(valid, alloc, 1))
        return _mean_over_valid(per, valid)


class Balanced:
    name, normalized = "balanced", False

    def applies(self, ctx: TaskContext) -> bool:
        return True

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        index = ctx.snapshot.res_index
        rows = [index[CPU], index[MEMORY]] + ([index[GPU]] if ctx.gpu else [])
        requested, alloc = _requested_and_alloc(ctx, cols, np.array(rows), nonzero=False)
        valid = alloc > 0
        fraction = np.where(valid, np.minimum(1.0, requested / np.where(valid, alloc, 1)), 0.0)
        count = np.maximum(valid.sum(axis=0), 1)
        mean = fraction.sum(axis=0) / count
        variance = np.where(valid, (fraction - mean) ** 2, 0.0).sum(axis=0) / count
        return np.floor((1.0 - np.sqrt(variance)) * 100 + FLOOR_EPSILON).astype(np.int64)
