"""Hard capacity checks at a leaf queue and every ancestor: limits, and deserved for non-preemptible jobs.

Both return ``None`` when the request fits, else a reason naming the queue and the resource. The leaf is
checked first, then each ancestor up to the top; within a queue, resources in the tree's order. Only
resources the request asks for (> 0) and the queue governs are checked (KAI's max_allowed_check and
quota_check), so a queue already over a limit still admits a request that does not use that resource.
"""

from __future__ import annotations

import numpy as np

from loadmaster.core.resources import format_quantity
from loadmaster.queues.hierarchy import BoolArray, IntArray, QueueTree
from loadmaster.queues.usage import QueueUsage


def fits_limits(usage: QueueUsage, tree: QueueTree, leaf: int, request: IntArray) -> str | None:
    """``allocated + request <= limit`` at the leaf and every ancestor, for every limited resource.

    Reason: ``queue team-a limit gpu: 4 allocated + 2 requested > 4``.
    """
    return _refusal(tree, leaf, request, usage.allocated, "allocated", tree.limit, tree.limit_set, "limit")


def fits_non_preemptible_quota(
    usage: QueueUsage, tree: QueueTree, leaf: int, request: IntArray
) -> str | None:
    """For a non-preemptible job: ``allocated_non_preemptible + request <= deserved`` at every level.

    A non-preemptible job can never be reclaimed, so it must fit in what the queue is guaranteed.
    Resources the queue's deserved does not name are not governed (unlimited).
    Reason: ``queue team-a deserved gpu: 1 allocated to non-preemptible jobs + 2 requested > 2``.
    """
    held, words = usage.allocated_non_preemptible, "allocated to non-preemptible jobs"
    return _refusal(tree, leaf, request, held, words, tree.deserved, tree.deserved_set, "deserved")


def _refusal(
    tree: QueueTree,
    leaf: int,
    request: IntArray,
    held: IntArray,
    held_words: str,
    bound: IntArray,
    bound_set: BoolArray,
    bound_name: str,
) -> str | None:
    """``held + request <= bound`` at the leaf and every ancestor, for every resource ``bound_set`` governs;
    else the first excess, as ``queue <name> <bound_name> <resource>: <held> <held_words> + <request>
    requested > <bound>``."""
    path = tree.paths[leaf]
    found = _first_excess(held[:, path], request, bound[:, path], bound_set[:, path])
    if found is None:
        return None
    p, r = found
    queue, resource = int(path[p]), tree.resources[r]
    amounts = (held[r, queue], request[r], bound[r, queue])
    now, asked, most = (format_quantity(resource, int(amount)) for amount in amounts)
    return (
        f"queue {tree.names[queue]} {bound_name} {resource}: {now} {held_words} + {asked} requested > {most}"
    )


def _first_excess(
    allocated: IntArray, request: IntArray, bound: IntArray, governed: BoolArray
) -> tuple[int, int] | None:
    """First (path position, resource) with ``allocated + request > bound``, governed and requested."""
    excess = governed & (request[:, None] > 0) & (allocated + request[:, None] > bound)
    hits = np.argwhere(excess.T)  # rows = path positions (leaf first), then resources: the check order
    if hits.size == 0:
        return None
    return int(hits[0, 0]), int(hits[0, 1])
