"""Fair share of every queue, per resource, computed level by level from the top of the tree.

The top-level queues divide ``total`` (the allocatable of Ready nodes); every other queue's siblings
divide their parent's fair share (``division.py`` says how one level is divided). A queue's demand is
the allocated plus pending request of its whole subtree, so a parent asks for what its leaves ask for.

Where KAI's semantics make the result surprising, on purpose:

* deserved quotas are granted first even if they over-commit the parent's share or the cluster, so
  siblings' fair shares can sum to more than their parent's when deserved over-commits;
* over-quota shares are whole units of ``division_unit``: whole GPUs (and whole units of every
  extended resource), millicores of cpu, bytes of memory.
"""

from __future__ import annotations

import numpy as np

from loadmaster.core.resources import CPU, MEMORY, scale_of
from loadmaster.queues.division import Claim, divide
from loadmaster.queues.hierarchy import IntArray, QueueTree


def division_unit(resource: str) -> int:
    """Granularity of over-quota shares in canonical units.

    KAI floors over-quota shares to its own units: millicores, bytes, and whole GPU devices. Every other
    resource is a count (like GPUs), so its share is floored to whole user-facing units as well.
    """
    return 1 if resource in (CPU, MEMORY) else scale_of(resource)


def subtree_demand(tree: QueueTree, demand: IntArray) -> IntArray:
    """``demand`` summed upwards: a leaf keeps its own column, a parent gets the sum of its children.

    Values given for non-leaf queues are ignored: jobs belong to leaf queues (KAI ignores jobs whose
    queue is not a leaf).
    """
    total = np.zeros_like(demand)
    for queue in reversed(tree.top_down()):  # children before parents
        if tree.is_leaf(queue):
            total[:, queue] = demand[:, queue]
        else:
            total[:, queue] = total[:, list(tree.children[queue])].sum(axis=1)
    return total


def compute_fair_share(tree: QueueTree, total: IntArray, demand: IntArray) -> IntArray:
    """``fair_share[r, q]`` for every resource and queue (canonical units).

    ``total[r]``: allocatable of Ready nodes. ``demand[r, q]``: allocated + pending request of leaf
    queue ``q``. Per resource, top-level queues divide ``total[r]``; every parent's children divide the
    parent's fair share. See ``division.py`` for one level.
    """
    shape = (len(tree.resources), tree.size)
    if total.shape != (len(tree.resources),):
        raise ValueError(f"total: expected shape {(len(tree.resources),)}, got {total.shape}")
    if demand.shape != shape:
        raise ValueError(f"demand: expected shape {shape}, got {demand.shape}")
    if (total < 0).any() or (demand < 0).any():
        raise ValueError("total and demand must not be negative")
    wanted = subtree_demand(tree, demand.astype(np.int64))
    requestable = np.where(tree.limit_set, np.minimum(tree.limit, wanted), wanted)
    fair_share = np.zeros(shape, dtype=np.int64)
    levels: list[tuple[int | None, tuple[int, ...]]] = [(None, tree.top)]
    levels += [(parent, tree.children[parent]) for parent in tree.top_down() if tree.children[parent]]
    for r, resource in enumerate(tree.resources):
        unit = division_unit(resource)
        for parent, siblings in levels:  # a parent's share is known before its children divide it
            amount = int(total[r]) if parent is None else int(fair_share[r, parent])
            claims = [_claim(tree, requestable, r, q) for q in siblings]
            fair_share[r, list(siblings)] = divide(amount, claims, unit)
    return fair_share


def _claim(tree: QueueTree, requestable: IntArray, r: int, queue: int) -> Claim:
    return Claim(
        deserved=int(tree.deserved[r, queue]),
        requestable=int(requestable[r, queue]),
        weight=tree.over_quota_weight[queue],
        priority=tree.priority[queue],
        age=queue,
    )
