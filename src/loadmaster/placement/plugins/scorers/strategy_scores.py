"""The strategy scores (weight 1 in ``default``): binpack, spread and balanced, one scorer each.

Rows scored: cpu, memory and every other resource the task requests, skipping (per node) resources
whose allocatable is 0. ``req_r`` = requests of tasks Running or Pipelined on the node + the task's;
Releasing requests are not counted (what they free counts as free). For binpack and spread, a task
that omits cpu counts as 100m and one that omits memory as 200Mi (kube-scheduler's non-zero rule),
for the task being placed and the tasks already there. Integer arithmetic, truncating division:

* binpack (most allocated): ``s_r = min(req, alloc)*100 // alloc``; score = ``sum(s_r) // count``
* spread (least allocated): ``s_r = (alloc - req)*100 // alloc`` (0 if req > alloc); same mean
* balanced: over cpu, memory (and gpu if requested), as written:
  ``f_r = min(1, req_r / alloc_r)``; score = ``floor((1 - std(f))*100)``, population std

``score_copies(ctx, cols, copies)`` is the score node ``cols[i]`` would get once ``copies[i]`` more
identical tasks were placed there (``req_r += copies * request_r``): what the engine's fill path needs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from loadmaster.core.resources import CPU, GPU, MEMORY
from loadmaster.placement.context import Rows, TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer

FloatArray = npt.NDArray[np.float64]

# floor((1 - std)*100) computed in floating point: 0.93*100 is 92.999..., so nudge before flooring.
FLOOR_EPSILON = 1e-9
# The truncating divisions ``a*100 // b`` are done in float64 as ``floor(a*100 / b)``. That is exact
# while a*100 and b are below 2**53 and 1/b exceeds the rounding error of a quotient <= 100 (~2e-14),
# i.e. for any node with less than 10 TiB of memory (b in bytes): a division of two exact integers is
# correctly rounded, so a true quotient k - 1/b never rounds up to the integer k.


def _requested(
    ctx: TaskContext, cols: Cols, rows: Rows, nonzero: bool, copies: IntArray | None = None
) -> FloatArray:
    """``used + request`` (times ``copies + 1``) as float64, in a fresh array the caller works in."""
    used = ctx.snapshot.state.node_used_nz if nonzero else ctx.snapshot.state.node_used
    request = ctx.request_nz if nonzero else ctx.request
    block = used[rows][:, cols]
    added = request[rows, None] if copies is None else request[rows, None] * (copies + 1)
    out = np.empty(block.shape, dtype=np.float64)
    np.add(block, added, out=out)  # summed in int64, then converted: exact below 2**53
    return out


def _alloc_and_divisor(ctx: TaskContext, cols: Cols, rows: Rows) -> tuple[IntArray, FloatArray]:
    """allocatable as written, and as float64 divisors with 0 replaced by 1 (those resources are
    skipped by the mean anyway); the divisors are converted once per snapshot."""
    snapshot = ctx.snapshot
    divisor = snapshot.memo.get(("alloc_divisor",))
    if divisor is None:
        divisor = np.where(snapshot.node_alloc == 0, 1, snapshot.node_alloc).astype(np.float64)
        snapshot.memo[("alloc_divisor",)] = divisor
    assert isinstance(divisor, np.ndarray)
    return snapshot.node_alloc[rows][:, cols], divisor[rows][:, cols]


def _mean_over_valid(per_resource: FloatArray, alloc: IntArray) -> IntArray:
    """Mean of the per-resource scores over resources with allocatable > 0, truncated. The scores
    are whole numbers, so the sum is exact and the division is done in integers."""
    valid = alloc > 0
    if valid.all():
        total: IntArray = per_resource.sum(axis=0).astype(np.int64)
        total //= per_resource.shape[0]
        return total
    count = valid.sum(axis=0)
    total = np.where(valid, per_resource, 0.0).sum(axis=0).astype(np.int64)
    return np.where(count > 0, total // np.maximum(count, 1), 0).astype(np.int64)


def binpack_score(ctx: TaskContext, cols: Cols, copies: IntArray | None = None) -> IntArray:
    """``floor(min(req, alloc)*100 / alloc)`` per resource, in place (no full-length temporaries)."""
    per = _requested(ctx, cols, ctx.score_index, nonzero=True, copies=copies)
    alloc, divisor = _alloc_and_divisor(ctx, cols, ctx.score_index)
    np.minimum(per, alloc, out=per)
    np.multiply(per, 100.0, out=per)
    np.divide(per, divisor, out=per)
    np.floor(per, out=per)
    return _mean_over_valid(per, alloc)


def spread_score(ctx: TaskContext, cols: Cols, copies: IntArray | None = None) -> IntArray:
    """``floor((alloc - req)*100 / alloc)`` per resource, 0 where req > alloc, in place."""
    per = _requested(ctx, cols, ctx.score_index, nonzero=True, copies=copies)
    alloc, divisor = _alloc_and_divisor(ctx, cols, ctx.score_index)
    over = per > alloc
    np.subtract(alloc, per, out=per)
    np.multiply(per, 100.0, out=per)
    np.divide(per, divisor, out=per)
    np.floor(per, out=per)
    per[over] = 0.0
    return _mean_over_valid(per, alloc)


def balanced_score(ctx: TaskContext, cols: Cols, copies: IntArray | None = None) -> IntArray:
    index = ctx.snapshot.res_index
    rows = np.array([index[CPU], index[MEMORY]] + ([index[GPU]] if ctx.gpu else []))
    requested = _requested(ctx, cols, rows, nonzero=False, copies=copies)
    alloc = ctx.snapshot.node_alloc[rows][:, cols]
    valid = alloc > 0
    fraction = np.where(valid, np.minimum(1.0, requested / np.where(valid, alloc, 1)), 0.0)
    count = np.maximum(valid.sum(axis=0), 1)
    mean = fraction.sum(axis=0) / count
    variance = np.where(valid, (fraction - mean) ** 2, 0.0).sum(axis=0) / count
    return np.asarray(np.floor((1.0 - np.sqrt(variance)) * 100 + FLOOR_EPSILON), dtype=np.int64)


StrategyScore = Callable[[TaskContext, Cols, IntArray | None], IntArray]


class StrategyScorer(Scorer):
    """One strategy as a scorer: never normalized (a node's score depends on that node alone)."""

    normalized = False

    def __init__(self, name: str, strategy_score: StrategyScore) -> None:
        self.name = name
        self._score = strategy_score

    def applies(self, ctx: TaskContext) -> bool:
        return True

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        return self._score(ctx, cols, None)

    def score_copies(self, ctx: TaskContext, cols: IntArray, copies: IntArray) -> IntArray:
        return self._score(ctx, cols, copies)


STRATEGY_SCORERS = (
    StrategyScorer("binpack", binpack_score),
    StrategyScorer("spread", spread_score),
    StrategyScorer("balanced", balanced_score),
)
