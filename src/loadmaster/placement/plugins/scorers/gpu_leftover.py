"""Scorer ``gpu_leftover`` (profile ``gpu_pack``, weight 1/5): a GPU share should not leave on its device
a sliver too large to count as full and too small for the shares that arrive.

For a task asking a share ``g`` (0 < g < 1 GPU; milli-GPU), the device it takes on node n is fixed by the
placement rule (the scenario format: the most used device where it still fits), so its free ``f`` is the
least free among n's devices with ``f >= g``, and what it leaves there is ``l = f - g``:

    score = 0    if SLACK < l < U     (a stranded sliver)
            100  otherwise            (the device is as good as full, or what is left takes a share)

``U`` is the smallest share the workload asks often, read from the cycle's GPU shapes (the learned
distribution, else the cluster's own GPU tasks; ``gpu_fragmentation.workload_shapes``): with the shapes'
frequencies ``p`` merged by share size and sizes ascending, ``U`` is the first size at which the
cumulative frequency passes ``RARE``, i.e. the GPU tasks asking less than ``U`` are at most 2 % of all:

    U = min { s : sum_{s' <= s} p(s') > RARE }        (GPU_DEVICE if no size passes it)

Tasks of whole GPUs, or of none, do not get it (a whole GPU leaves no part of a device behind).

Why, on the FGD paper's protocol (openb, bench/placement.py; docs/decisions.md, issue 18, session 8):
the GPUs left idle at the end are slivers, and ``gpu_fragmentation`` alone put a 0.32-GPU task next to a
0.47 (0.21 left, which only the 1.3 % of tasks asking 0.16 GPU or less can use) where another node had
the 0.35 a 0.65-GPU task leaves, or a fresh device, keeping the 0.53 for the 0.47-GPU tasks, the most
frequent share. Its measure weighs the capacity a placement makes unusable by the shapes' frequencies;
it does not see that a sliver below every frequent share is lost for good while a larger remainder is
filled by the shares still to come. Seed 42: the GPU left idle outside devices holding a 0.81-GPU task
alone fell from 71.8 to 52.2 (devices holding 0.65 + 0.32: 172 -> 240; 0.47 + 0.32: 38 -> 19; 0.65 +
0.23: 60 -> 4); mean of seeds 42-51, 257.5 -> 240.0 unallocated GPUs (seeds 52-61: 260.5 -> 243.3).

The window on openb is ``(60, 220)`` milli-GPU: 60 (``SLACK``, a device 94 % used is as good as full) is
what two 0.47-GPU tasks leave on a device, a pairing not to discourage; ``U`` = 220, the trace's 0.22-GPU
share, since the shares below it (0.16, 0.14, 0.11 and 0.05) are 1.5 % of its GPU tasks and with 0.22
2.4 %. Its neighbours are within 5 GPUs of it: (40, 220) 240.7, (80, 220) 242.1, (60, 200) 242.8,
(60, 230) 242.2, (60, 250) 245.0; weight 1/10 243.0, 3/10 239.5, 1/2 241.8. ``U`` is read from the
shapes rather than fixed at 220 so that a workload of other shares gets its own window.

Local (a placement on node n changes only node n's score); infeasible nodes are never picked, and score
100 here (no device takes the share, so no sliver).
"""

from __future__ import annotations

import numpy as np

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.core.gpu_shapes import GpuShapes
from loadmaster.core.resources import GPU_DEVICE
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer
from loadmaster.placement.gpu_fragmentation import free_devices, workload_shapes

# A leftover in (SLACK, U) milli-GPU is a stranded sliver (module docstring): up to SLACK a device is as
# good as full; U is the smallest share more than RARE of the GPU tasks ask, all smaller ones together.
SLACK = 60
RARE = 0.02
# Above every device's free: where the share fits no device (its leftover is then no sliver).
NO_DEVICE = np.iinfo(np.int64).max


class GpuLeftover(Scorer):
    name, normalized = "gpu_leftover", False

    def applies(self, ctx: TaskContext) -> bool:
        return 0 < ctx.gpu < GPU_DEVICE

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        nodes = np.arange(ctx.snapshot.n_nodes, dtype=np.int64)[cols]
        free = free_devices(ctx.snapshot, nodes)
        taken_from = np.where(free >= ctx.gpu, free, NO_DEVICE).min(axis=1, initial=NO_DEVICE)
        left = taken_from - ctx.gpu
        sliver = (left > SLACK) & (left < usable_share(ctx.snapshot))
        return np.asarray(np.where(sliver, 0, 100), dtype=np.int64)


def smallest_frequent_share(shapes: GpuShapes) -> int:
    """``U`` (module docstring): the first share size, ascending, at which the shapes' cumulative
    frequency passes ``RARE``; ``GPU_DEVICE`` when none does (no shares, or only rare ones)."""
    by_size: dict[int, float] = {}
    for shape, weight in shapes.weights:
        by_size[shape.gpu] = by_size.get(shape.gpu, 0.0) + weight
    total = sum(by_size.values())
    passed = 0.0
    for size in sorted(by_size):
        passed += by_size[size]
        if size >= GPU_DEVICE:
            break
        if passed > RARE * total:
            return size
    return GPU_DEVICE


def usable_share(snapshot: ClusterSnapshot) -> int:
    """``U`` for the snapshot's cycle, computed once per snapshot."""
    usable = snapshot.memo.get(("gpu_usable_share",))
    if usable is None:
        usable = snapshot.memo[("gpu_usable_share",)] = smallest_frequent_share(workload_shapes(snapshot))
    assert isinstance(usable, int)
    return usable
