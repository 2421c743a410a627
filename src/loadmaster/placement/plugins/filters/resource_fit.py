"""Filter ``capacity``: every request fits the node's free allocatable.

``free[r, n] = allocatable - requests of tasks Running, Pipelined or Releasing``; a task being placed
may also count what Releasing tasks will free (it is then Pipelined), so feasibility uses
``allocatable - used``. GPUs are checked per device (devices.py), not as a sum. A task that opted in
to overcommit adds the node's overcommit room (``core/overcommit.py``): it sees allocatable x factor.

``copies_that_fit`` counts how many identical copies of the task fit one after another (the engine's
fill path): ``min_r floor(free_r / request_r)``, and for GPUs ``floor(fully free devices / k)`` for k
whole devices, ``sum_d floor(free_d / share)`` for a share of one device (each placement takes a
device it fits on, so every device ends up holding exactly that many).
"""

from __future__ import annotations

import numpy as np

from loadmaster.core.devices import fits_devices, fits_every_device
from loadmaster.core.resources import GPU, GPU_DEVICE, format_quantity
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Rejection


def fits(ctx: TaskContext, cols: Cols, use_releasing: bool) -> BoolArray:
    state, rows = ctx.snapshot.state, ctx.fit_index
    free = (state.node_free if use_releasing else state.node_idle)[rows][:, cols]
    if ctx.overcommit:
        free = free + ctx.snapshot.overcommit_room[rows][:, cols]
    mask: BoolArray = np.asarray((free >= ctx.request[rows, None]).all(axis=0))
    if ctx.gpu:
        mask &= fits_devices(state.devices, ctx.gpu, use_releasing, cols)
    elif ctx.gpu_all:
        mask &= fits_every_device(state.devices, use_releasing, cols)
    return mask


def free_room(ctx: TaskContext) -> IntArray:
    """[R, N] the room a Pipelined placement of the task may use (overcommit room included when it
    opted in): for explanations and hints, off the hot path."""
    free = ctx.snapshot.state.node_free
    return free + ctx.snapshot.overcommit_room if ctx.overcommit else free


class ResourceFit:
    name, category, dynamic = "resource_fit", Rejection.CAPACITY, True

    def applies(self, ctx: TaskContext) -> bool:
        return bool(ctx.fit_rows.size) or ctx.gpu > 0 or ctx.gpu_all

    def mask(self, ctx: TaskContext, cols: Cols) -> BoolArray:
        return fits(ctx, cols, use_releasing=True)

    def copies_that_fit(self, ctx: TaskContext, cols: IntArray) -> IntArray:
        """How many copies of the task fit on each node of ``cols``, placed one after another (by what
        ``mask`` counts as free: releasing resources included)."""
        state, rows = ctx.snapshot.state, ctx.fit_index
        copies = np.full(len(cols), np.iinfo(np.int64).max, dtype=np.int64)
        if ctx.fit_rows.size:
            free = state.node_free[rows][:, cols]
            if ctx.overcommit:
                free = free + ctx.snapshot.overcommit_room[rows][:, cols]
            copies = (free // ctx.request[rows, None]).min(axis=0)
        if ctx.gpu:
            devices = state.devices
            capacity = devices.capacity[cols]  # only the asked nodes' rows, never a full-length copy
            free_devices = capacity - devices.used[cols]
            if ctx.gpu < GPU_DEVICE:
                on_devices = (free_devices // ctx.gpu).sum(axis=1)
            else:
                fully_free = ((free_devices == capacity) & (capacity > 0)).sum(axis=1)
                on_devices = fully_free // (ctx.gpu // GPU_DEVICE)
            copies = np.minimum(copies, on_devices)
        elif ctx.gpu_all:  # one copy takes every device
            every_free = fits_every_device(ctx.snapshot.state.devices, True, cols)
            copies = np.minimum(copies, every_free.astype(np.int64))
        return np.maximum(copies, 0)

    def explain(self, ctx: TaskContext, n: int) -> str:
        snapshot = ctx.snapshot
        free = free_room(ctx)[:, n]
        for r in ctx.fit_rows:
            if free[r] < ctx.request[r]:
                name = snapshot.resources[r]
                overcommit = " with overcommit" if ctx.overcommit and snapshot.overcommit_room[r, n] else ""
                return (
                    f"insufficient {name}: requested {format_quantity(name, int(ctx.request[r]))}, "
                    f"free{overcommit} {format_quantity(name, int(max(free[r], 0)))}"
                )
        devices = snapshot.state.devices
        device_free = devices.free(use_releasing=True)[n]
        whole = int(np.sum((device_free == devices.capacity[n]) & (devices.capacity[n] > 0)))
        if ctx.gpu_all:
            count = int(np.sum(devices.capacity[n] > 0))
            return f"insufficient gpu: requested all {count} devices, {whole} fully free"
        if ctx.gpu < 1000:
            best = int(device_free.max(initial=0))
            return (
                f"insufficient gpu: requested {format_quantity(GPU, ctx.gpu)} on one device, "
                f"most free on a device {format_quantity(GPU, best)}"
            )
        return f"insufficient gpu: requested {ctx.gpu // 1000} whole devices, {whole} fully free"
