"""Filter ``ports``: every host port the task needs is free on the node.

A port held by a Running or Pipelined task blocks the node; one held only by a Releasing task is
free for a Pipelined placement (like resources), so it blocks binding but not feasibility.
"""

from __future__ import annotations

import numpy as np

from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, Rejection


def ports_free(ctx: TaskContext, cols: Cols, use_releasing: bool) -> BoolArray:
    state = ctx.snapshot.state
    mask = np.ones(ctx.snapshot.n_nodes, dtype=np.bool_)[cols]
    for port in ctx.task.ports:
        held = state.ports_active.get(port)
        if held is not None:
            mask &= held[cols] == 0
        if not use_releasing:
            releasing = state.ports_releasing.get(port)
            if releasing is not None:
                mask &= releasing[cols] == 0
    return mask


class HostPorts:
    name, category, dynamic = "host_ports", Rejection.PORTS, True

    def applies(self, ctx: TaskContext) -> bool:
        return bool(ctx.task.ports)

    def mask(self, ctx: TaskContext, cols: Cols) -> BoolArray:
        return ports_free(ctx, cols, use_releasing=True)

    def explain(self, ctx: TaskContext, n: int) -> str:
        state = ctx.snapshot.state
        taken = [p for p in ctx.task.ports if p in state.ports_active and state.ports_active[p][n] > 0]
        return f"host port {', '.join(map(str, taken))} in use"
