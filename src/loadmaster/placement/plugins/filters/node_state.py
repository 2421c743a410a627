"""Filter ``status``: only Ready nodes get new tasks (NotReady = no heartbeat within 90 s)."""

from __future__ import annotations

from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, Rejection


class NodeState:
    name, category, dynamic = "node_state", Rejection.STATUS, False

    def applies(self, ctx: TaskContext) -> bool:
        return True

    def mask(self, ctx: TaskContext, cols: Cols) -> BoolArray:
        return ctx.snapshot.node_ready[cols]

    def explain(self, ctx: TaskContext, n: int) -> str:
        return f"node is {ctx.snapshot.nodes[n].state}"
