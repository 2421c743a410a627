"""Builders for queue tests: trees from compact specs, resource vectors in user units."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from loadmaster.core.model import Queue
from loadmaster.core.resources import scale_of
from loadmaster.queues import QueueTree, QueueUsage, compute_fair_share, queues_report
from loadmaster.queues.hierarchy import IntArray

RESOURCES = ("cpu", "memory", "gpu")


def canonical(resource: str, amount: float) -> int:
    """User units (cores, bytes, devices) to canonical integers; exact for the numbers tests use."""
    return round(amount * scale_of(resource))


def quota(**amounts: float) -> dict[str, int]:
    return {name: canonical(name, value) for name, value in amounts.items()}


def queue(
    name: str,
    parent: str | None = None,
    *,
    priority: int = 0,
    weight: float = 1.0,
    deserved: Mapping[str, float] | None = None,
    limit: Mapping[str, float] | None = None,
) -> Queue:
    return Queue(
        name=name,
        parent=parent,
        priority=priority,
        deserved=quota(**(deserved or {})),
        limit=quota(**(limit or {})),
        over_quota_weight=weight,
    )


def tree_of(*queues: Queue, resources: tuple[str, ...] = RESOURCES) -> QueueTree:
    return QueueTree.build(queues, resources)


def vec(tree: QueueTree, **amounts: float) -> IntArray:
    """A resource vector over the tree's resources, in user units (missing = 0)."""
    return np.array([canonical(r, amounts.get(r, 0)) for r in tree.resources], dtype=np.int64)


def per_queue(tree: QueueTree, amounts: Mapping[str, Mapping[str, float]]) -> IntArray:
    """An (R, Q) array from ``{queue: {resource: user amount}}``."""
    array = np.zeros((len(tree.resources), tree.size), dtype=np.int64)
    for name, values in amounts.items():
        array[:, tree.index_of(name)] = vec(tree, **values)
    return array


def in_user_units(tree: QueueTree, array: IntArray, name: str) -> dict[str, float]:
    """One queue's column in user units, zeros left out: easy to compare with a hand-computed table."""
    column = array[:, tree.index_of(name)]
    return {r: int(column[i]) / scale_of(r) for i, r in enumerate(tree.resources) if column[i]}


def usage_with(
    tree: QueueTree,
    allocations: Mapping[str, Mapping[str, float]],
    non_preemptible: Mapping[str, Mapping[str, float]] | None = None,
) -> QueueUsage:
    """Usage where each named leaf holds the given preemptible (and non-preemptible) amounts."""
    usage = QueueUsage.empty(tree)
    for name, values in allocations.items():
        usage.allocate(tree.index_of(name), vec(tree, **values), preemptible=True)
    for name, values in (non_preemptible or {}).items():
        usage.allocate(tree.index_of(name), vec(tree, **values), preemptible=False)
    return usage


def report_of_two_teams() -> dict[str, dict[str, Any]]:
    """dept (deserves 4 GPUs, limit 6) over team-a (priority 1, wants 5 GPUs) and team-b (weight 0)."""
    tree = tree_of(
        queue("dept", deserved={"gpu": 4}, limit={"gpu": 6}),
        queue("team-a", "dept", deserved={"gpu": 2, "memory": 2**33}, priority=1),
        queue("team-b", "dept", weight=0),
    )
    demand = per_queue(tree, {"team-a": {"gpu": 5, "cpu": 1.5}, "team-b": {"gpu": 1, "memory": 2**30}})
    fair = compute_fair_share(tree, vec(tree, gpu=8, cpu=16, memory=2**36), demand)
    usage = usage_with(tree, {"team-a": {"gpu": 3, "cpu": 1.5}}, {"team-b": {"gpu": 1}})
    return queues_report(tree, fair, usage, demand)
