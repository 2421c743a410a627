"""Why a task is not placed: every blocking reason on every node, counts per category, and the
smallest changes that would make it placeable.

Each node is counted once in ``summary``, under the first category it fails (categories in the
order of ``Rejection``); its message lists *all* the reasons it fails, so a user fixes everything in
one go instead of one reason per retry. Hints come from nodes that fail exactly one category: those
are one change away from taking the task; and a hint is shown only once the engine's filters, run
again on its node with its change made, let the task through (``hint_checks.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from loadmaster.core.resources import format_quantity
from loadmaster.placement.context import TaskContext
from loadmaster.placement.engine import PlacementEngine
from loadmaster.placement.extension_points import ALL, BoolArray, Filter, Rejection
from loadmaster.placement.hint_checks import capacity_shortfall, fits_once_changed, gpu_blocked
from loadmaster.placement.plugins.filters.resource_fit import free_room

# Hints are offered in this order: the cheapest kind of change first.
HINT_ORDER = (
    Rejection.CAPACITY, Rejection.PORTS, Rejection.UNSCHEDULABLE, Rejection.STATUS, Rejection.TAINT,
    Rejection.SELECTOR, Rejection.HOSTS, Rejection.GPU_MODEL, Rejection.GPU, Rejection.LICENSE,
    Rejection.RUNTIME, Rejection.VOLUMES, Rejection.TOPOLOGY,
)  # fmt: skip
MAX_HINTS = 3
# Nodes tried per category before giving its hint up: each try rebuilds one node (about a millisecond).
TRIES_PER_CATEGORY = 3


@dataclass(slots=True)
class Explanation:
    summary: dict[Rejection, int] = field(default_factory=dict)
    nodes: dict[str, str] = field(default_factory=dict)
    hints: list[str] = field(default_factory=list)
    reason: str = ""  # why it got nothing although nodes fit (gang, quota, ...), set by the action

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"summary": self.summary, "nodes": self.nodes}
        if self.hints:
            out["hints"] = self.hints
        if self.reason:
            out["reason"] = self.reason
        return out


def _capacity_hint(ctx: TaskContext, n: int) -> str:
    parts = [
        f"{format_quantity(name, less)} less {name}" for name, less in capacity_shortfall(ctx, n).items()
    ]
    if gpu_blocked(ctx, n):
        parts.append("GPU devices freed")
    return f"needs {' and '.join(parts)} to fit {ctx.snapshot.node_names[n]}"


def _hint(ctx: TaskContext, category: Rejection, n: int, message: str) -> str:
    name = ctx.snapshot.node_names[n]
    return {
        Rejection.CAPACITY: lambda: _capacity_hint(ctx, n),
        Rejection.UNSCHEDULABLE: lambda: f"{name} would fit if uncordoned",
        Rejection.STATUS: lambda: f"{name} would fit if it were Ready",
        Rejection.PORTS: lambda: f"{name} would fit once its {message.removesuffix(' in use')} is free",
        Rejection.HOSTS: lambda: f"{name} would fit if added to the task's hosts",
    }.get(category, lambda: f"{name} would fit if not for: {message}")()


def _missing_labels(ctx: TaskContext, single: dict[Rejection, list[int]]) -> list[str]:
    """ "no node has label k=v", when labelling a node that fails on its selector alone would do."""
    labels = ctx.snapshot.labels
    missing = [
        f"no node has label {k}={v}" for k, v in ctx.task.node_selector.items() if not labels.has_label(k, v)
    ]
    candidates = single.get(Rejection.SELECTOR, [])[:TRIES_PER_CATEGORY]
    if missing and any(fits_once_changed(ctx, n, Rejection.SELECTOR) for n in candidates):
        return missing
    return []


def _capacity_order(ctx: TaskContext, nodes: list[int]) -> list[int]:
    """Nodes that fail only on capacity, closest to fitting first (smallest largest relative shortfall)."""
    free = free_room(ctx)[:, nodes]
    request = np.maximum(ctx.request[:, None], 1)
    shortfall = np.maximum(ctx.request[:, None] - free, 0) / request
    worst = shortfall[ctx.fit_rows].max(axis=0) if ctx.fit_rows.size else np.zeros(len(nodes))
    return [nodes[i] for i in np.argsort(worst, kind="stable")]


def explain(engine: PlacementEngine, t: int) -> Explanation:
    ctx = engine.context(t)
    snapshot = ctx.snapshot
    filters = engine.filters_for(ctx)
    masks: list[BoolArray] = [f.mask(ctx, ALL) for f in filters]
    explanation = Explanation()
    failing_count = np.zeros(snapshot.n_nodes, dtype=np.int64)
    first_failing = np.full(snapshot.n_nodes, -1, dtype=np.int64)
    for i, mask in enumerate(masks):
        failed = ~mask
        failing_count += failed
        first_failing = np.where((first_failing < 0) & failed, i, first_failing)
    rejected = np.flatnonzero(first_failing >= 0)
    for n in rejected:
        explanation.summary[filters[first_failing[n]].category] = (
            explanation.summary.get(filters[first_failing[n]].category, 0) + 1
        )
        reasons = [filters[i].explain(ctx, int(n)) for i, mask in enumerate(masks) if not mask[n]]
        explanation.nodes[snapshot.node_names[n]] = "; ".join(reasons)
    explanation.hints = _hints(ctx, filters, masks, failing_count, first_failing)
    return explanation


def _hints(ctx: TaskContext, filters: list[Filter], masks: list[BoolArray], failing_count: np.ndarray,
           first_failing: np.ndarray) -> list[str]:  # fmt: skip
    """Up to MAX_HINTS checked hints, the cheapest kind of change first; per category the nodes closest
    to fitting are tried, at most TRIES_PER_CATEGORY of them."""
    single: dict[Rejection, list[int]] = {}
    for n in np.flatnonzero(failing_count == 1).tolist():
        single.setdefault(filters[first_failing[n]].category, []).append(n)
    hints = _missing_labels(ctx, single)
    for category in HINT_ORDER:
        nodes = single.get(category, [])
        if category == Rejection.CAPACITY:
            nodes = _capacity_order(ctx, nodes)
        if len(hints) >= MAX_HINTS:
            break
        index = [f.category for f in filters].index(category) if nodes else -1
        for n in nodes[:TRIES_PER_CATEGORY]:
            if fits_once_changed(ctx, n, category):
                hints.append(_hint(ctx, category, n, filters[index].explain(ctx, n)))
                break
    if not ctx.snapshot.n_nodes:
        hints.append("the cluster has no nodes")
    return hints[:MAX_HINTS]
