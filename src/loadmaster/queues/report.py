"""The ``queues`` key of simulate's JSON: why each queue is or is not getting resources.

Quantities are user-facing numbers: cpu in cores, memory in bytes, gpu in devices, other resources in
their counted unit (canonical amounts divided by ``resources.scale_of``); whole numbers are ints.

``dominant_share`` is the number the queue order compares (rule 6 in ``standing.py``):
``max_r allocated[r] / allocatable[r]`` with ``allocatable = min(limit, max(deserved, fair_share))``.
Below 1 the queue holds less than it may keep; above 1 it is over its share in some resource and its
jobs can be reclaimed. A resource held while its allocatable share is 0 counts
``allocated (user units) * 1000`` (``standing.ZERO_SHARE_PENALTY``) so such a queue ranks last.
"""

from __future__ import annotations

from typing import Any

from loadmaster.core.resources import scale_of
from loadmaster.queues.entitlement import allocatable_share
from loadmaster.queues.hierarchy import NO_PARENT, BoolArray, IntArray, QueueTree
from loadmaster.queues.shares import subtree_demand
from loadmaster.queues.standing import dominant_share
from loadmaster.queues.usage import QueueUsage


def user_amount(resource: str, amount: int) -> int | float:
    """Canonical units to the user's unit: ``cpu 1500 -> 1.5``, ``gpu 2000 -> 2``, ``memory`` unchanged."""
    scale = scale_of(resource)
    return amount // scale if amount % scale == 0 else amount / scale


def queues_report(
    tree: QueueTree, fair_share: IntArray, usage: QueueUsage, demand: IntArray | None = None
) -> dict[str, dict[str, Any]]:
    """Per queue (in age order): deserved, fair_share, allocated, dominant_share, limits and weights.

    ``deserved`` and ``limit`` list only the resources the queue governs; ``fair_share`` and
    ``allocated`` list every resource. With ``demand`` (the same leaf array given to
    ``compute_fair_share``), ``requested`` shows each queue's subtree demand, the bound of its share.
    """
    shares = allocatable_share(tree, fair_share)
    requested = None if demand is None else subtree_demand(tree, demand)
    report: dict[str, dict[str, Any]] = {}
    for q, name in enumerate(tree.names):
        entry: dict[str, Any] = {
            "parent": None if tree.parent[q] == NO_PARENT else tree.names[tree.parent[q]],
            "priority": tree.priority[q],
            "over_quota_weight": tree.over_quota_weight[q],
            "deserved": _amounts(tree, tree.deserved[:, q], tree.deserved_set[:, q]),
            "limit": _amounts(tree, tree.limit[:, q], tree.limit_set[:, q]),
            "fair_share": _amounts(tree, fair_share[:, q]),
            "allocated": _amounts(tree, usage.allocated[:, q]),
            "allocated_non_preemptible": _amounts(tree, usage.allocated_non_preemptible[:, q]),
            "dominant_share": round(dominant_share(tree, usage.allocated[:, q], shares[:, q]), 6),
        }
        if requested is not None:
            entry["requested"] = _amounts(tree, requested[:, q])
        report[name] = entry
    return report


def _amounts(tree: QueueTree, amounts: IntArray, only: BoolArray | None = None) -> dict[str, int | float]:
    return {
        resource: user_amount(resource, int(amounts[r]))
        for r, resource in enumerate(tree.resources)
        if only is None or bool(only[r])
    }
