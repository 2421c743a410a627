"""Scorer ``preferred_affinity`` (weight 2): raw = sum of the weights of the task's preferred terms
whose labels (and expressions) all match the node; ``score = raw*100 // max_raw`` over feasible nodes
(0 everywhere when max_raw = 0)."""

from __future__ import annotations

import numpy as np

from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer


class PreferredAffinity(Scorer):
    name, normalized = "preferred_affinity", True

    def applies(self, ctx: TaskContext) -> bool:
        return bool(ctx.task.preferred_node_affinity)

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        labels = ctx.snapshot.labels
        raw = np.zeros(ctx.snapshot.n_nodes, dtype=np.int64)
        for term in ctx.task.preferred_node_affinity:
            match = labels.match_pairs(term.match_labels) & labels.match_expressions(term.match_expressions)
            raw += np.where(match, term.weight, 0)
        max_raw = int(raw[feasible].max(initial=0))
        if max_raw == 0:
            return np.zeros(ctx.snapshot.n_nodes, dtype=np.int64)[cols]
        return (raw * 100 // max_raw)[cols]
