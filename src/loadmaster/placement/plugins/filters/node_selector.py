"""Filter ``selector``: every ``node_selector`` pair is among the node's labels, and every
``required_node_affinity`` expression (In, NotIn, Exists, DoesNotExist, Gt, Lt) holds."""

from __future__ import annotations

import numpy as np

from loadmaster.core.model import expression_holds
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, Rejection


class NodeSelector:
    name, category, dynamic = "node_selector", Rejection.SELECTOR, False

    def applies(self, ctx: TaskContext) -> bool:
        return bool(ctx.task.node_selector or ctx.task.required_node_affinity)

    def mask(self, ctx: TaskContext, cols: Cols) -> BoolArray:
        labels = ctx.snapshot.labels
        mask = labels.match_pairs(ctx.task.node_selector.items())
        if ctx.task.required_node_affinity:
            mask = mask & labels.match_expressions(ctx.task.required_node_affinity)
        return np.asarray(mask[cols])

    def explain(self, ctx: TaskContext, n: int) -> str:
        labels = ctx.snapshot.nodes[n].labels
        for key, value in ctx.task.node_selector.items():
            if labels.get(key) != value:
                return f"node lacks label {key}={value}"
        for expression in ctx.task.required_node_affinity:
            if not expression_holds(expression, labels):
                values = ", ".join(expression.values)
                return f"node affinity {expression.key} {expression.operator} [{values}] does not hold"
        return "node labels do not match"
