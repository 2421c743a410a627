"""What a queue is entitled to: its allocatable share, and whether an amount is within its deserved quota.

Two readings of an ungoverned deserved (a resource the queue's ``deserved`` does not name) are used on
purpose, and only these two:

* as **0** where shares are divided and measured (fair share, allocatable share, dominant share): a
  queue that names only ``gpu`` competes for cpu with its over-quota weight, like every other queue;
* as **unlimited** where an amount is checked against deserved (the "starved" rule, the
  GuaranteeDeservedQuota reclaim strategy, the non-preemptible quota): the quota does not govern it.

A queue that names no resource in ``deserved`` has no guarantee at all, so it is never "within deserved":
otherwise a queue without a quota would always rank as starved ahead of queues that have one.
"""

from __future__ import annotations

import numpy as np

from loadmaster.core.resources import format_quantity
from loadmaster.queues.hierarchy import BoolArray, IntArray, QueueTree


def allocatable_share(tree: QueueTree, fair_share: IntArray) -> IntArray:
    """``allocatable[r, q] = min(limit[r, q], max(deserved[r, q], fair_share[r, q]))``.

    An ungoverned limit does not cap; an ungoverned deserved counts as 0. The result is always finite
    because fair share is (KAI's "unlimited -> cluster total" case cannot arise).
    """
    share = np.maximum(tree.deserved, fair_share)
    return np.where(tree.limit_set, np.minimum(tree.limit, share), share)


def is_within_deserved(tree: QueueTree, queue: int, amount: IntArray) -> bool:
    """True if the queue has a deserved quota and ``amount[r] <= deserved[r]`` for every governed ``r``."""
    governed = tree.deserved_set[:, queue]
    if not governed.any():
        return False
    return bool((amount[governed] <= tree.deserved[governed, queue]).all())


def exceeds_deserved(tree: QueueTree, queue: int, amount: IntArray) -> bool:
    """True if ``amount[r] > deserved[r]`` for at least one resource the queue's deserved governs."""
    governed = tree.deserved_set[:, queue]
    return bool((amount[governed] > tree.deserved[governed, queue]).any())


def describe_amounts(tree: QueueTree, amount: IntArray, only: BoolArray | None = None) -> str:
    """``"cpu 4, memory 8Gi, gpu 2"`` in user-facing units, optionally only where ``only`` is true."""
    parts = [
        f"{name} {format_quantity(name, int(amount[r]))}"
        for r, name in enumerate(tree.resources)
        if only is None or bool(only[r])
    ]
    return ", ".join(parts) if parts else "nothing"
