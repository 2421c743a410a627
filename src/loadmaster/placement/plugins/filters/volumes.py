"""Filter ``volumes``: each volume claim finds a pool on the node with matching labels and room
(the first by name among matching pools with room). Only nodes that have pools are examined, so the
cost is proportional to the pools in the cluster, not the nodes."""

from __future__ import annotations

import numpy as np

from loadmaster.core.resources import MEMORY, format_quantity
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, Rejection


class Volumes:
    name, category, dynamic = "volumes", Rejection.VOLUMES, True

    def applies(self, ctx: TaskContext) -> bool:
        return bool(ctx.task.volumes)

    def mask(self, ctx: TaskContext, cols: Cols) -> BoolArray:
        snapshot = ctx.snapshot
        full = np.zeros(snapshot.n_nodes, dtype=np.bool_)
        for n in snapshot.pools.nodes_with_pools:
            node = int(n)
            full[node] = snapshot.pools.assign(snapshot.state.pool_used, node, ctx.task.volumes) is not None
        return full[cols]

    def explain(self, ctx: TaskContext, n: int) -> str:
        claims = "; ".join(
            f"{','.join(f'{k}={v}' for k, v in c.match_labels) or 'any'} "
            f"{format_quantity(MEMORY, c.size_bytes)}"
            for c in ctx.task.volumes
        )
        return f"no volume pool with room for [{claims}]"
