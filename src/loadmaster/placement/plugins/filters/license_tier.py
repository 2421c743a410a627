"""Filter ``license``: tiers are ordered (``config.license_tiers``, lowest first); a node's tier must be
>= the task's. A node without a tier has the lowest one."""

from __future__ import annotations

import numpy as np

from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, Rejection


def node_tier_ranks(ctx: TaskContext) -> np.ndarray:
    snapshot = ctx.snapshot
    ranks = snapshot.memo.get(("license_ranks",))
    if ranks is None:
        order = {tier: i for i, tier in enumerate(snapshot.config.license_tiers)}
        ranks = np.array([order.get(node.license_tier or "", 0) for node in snapshot.nodes], dtype=np.int64)
        snapshot.memo[("license_ranks",)] = ranks
    assert isinstance(ranks, np.ndarray)
    return ranks


class LicenseTier:
    name, category, dynamic = "license_tier", Rejection.LICENSE, False

    def applies(self, ctx: TaskContext) -> bool:
        return ctx.task.license_tier is not None

    def mask(self, ctx: TaskContext, cols: Cols) -> BoolArray:
        wanted = ctx.snapshot.config.license_tiers.index(ctx.task.license_tier or "")
        return np.asarray(node_tier_ranks(ctx)[cols] >= wanted)

    def explain(self, ctx: TaskContext, n: int) -> str:
        tiers = ctx.snapshot.config.license_tiers
        node_tier = ctx.snapshot.nodes[n].license_tier or tiers[0]
        return f"license tier {node_tier} < {ctx.task.license_tier}"
