"""Scorer ``gpu_leftover`` (profile ``gpu_pack``, weight 1/5): a GPU share should not leave on its device
a sliver too large to count as full and too small for the shares that arrive.

For a task asking a share ``g`` (0 < g < 1 GPU; milli-GPU), the device it takes on node n is fixed by the
placement rule (the scenario format: the most used device where it still fits), so its free ``f`` is the
least free among n's devices with ``f >= g``, and what it leaves there is ``l = f - g``:

    score = 0    if SLACK < l < USABLE        (a stranded sliver)
            100  otherwise                    (the device is as good as full, or what is left takes a share)

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

The window ``(60, 220)`` milli-GPU: 60 is what two 0.47-GPU tasks leave on a device (a pairing not to
discourage), 220 the smallest share the openb tasks ask often (0.22-0.23 GPU; below it 0.16, 0.14, 0.11
and 0.05, 1.3 % of the GPU tasks). Its neighbours are within 5 GPUs of it: (40, 220) 240.7, (80, 220)
242.1, (60, 200) 242.8, (60, 230) 242.2, (60, 250) 245.0; weight 1/10 243.0, 3/10 239.5, 1/2 241.8.

Local (a placement on node n changes only node n's score); infeasible nodes are never picked, and score
100 here (no device takes the share, so no sliver).
"""

from __future__ import annotations

import numpy as np

from loadmaster.core.resources import GPU_DEVICE
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer
from loadmaster.placement.gpu_fragmentation import free_devices

# A leftover in (SLACK, USABLE) milli-GPU is a stranded sliver (module docstring).
SLACK = 60
USABLE = 220
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
        sliver = (left > SLACK) & (left < USABLE)
        return np.asarray(np.where(sliver, 0, 100), dtype=np.int64)
