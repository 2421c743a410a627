"""Which queue goes next, and which job within a queue (KAI's queue order and job order).

The tree walk compares siblings at each level (``standing.compare_queues``), each represented by its
own usage and the best job of its best leaf, down to a leaf; KAI re-sorts after every pop, and so do
we: every call walks the live usage. Victim queues use the same comparison reversed. Ties the
comparison cannot break (never between two different queues: age decides) keep age order.

These functions walk from scratch and are the reference; ``tournament.QueueTournament`` returns the
same leaf incrementally (only the sibling groups that changed are compared again), for callers that
walk once per job.

Job order within a leaf: higher priority, then elastic state (below ``min_available`` < at it < above
it), then older, then name. Victim order is the reverse.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from loadmaster.core.model import Job
from loadmaster.queues.entitlement import allocatable_share
from loadmaster.queues.hierarchy import IntArray, QueueTree
from loadmaster.queues.standing import compare_queues, queue_standings
from loadmaster.queues.usage import QueueUsage


def next_leaf(
    tree: QueueTree, usage: QueueUsage, fair_share: IntArray, pending: Mapping[int, IntArray]
) -> int | None:
    """The leaf whose best job goes next: the best child at each level, from the top down.

    ``pending[leaf]`` = request of the leaf's best pending job (the tasks it would allocate now);
    leaves without pending jobs are absent. ``None`` when nothing is pending.
    """
    return _walk(tree, usage, fair_share, pending, as_victims=False)


def next_victim_leaf(
    tree: QueueTree, usage: QueueUsage, fair_share: IntArray, taken: Mapping[int, IntArray]
) -> int | None:
    """The leaf to take the next victim from: the reversed comparison at each level.

    ``taken[leaf]`` = resources of the victims already taken from the leaf plus its next victim;
    leaves without victims left are absent.
    """
    return _walk(tree, usage, fair_share, taken, as_victims=True)


def _walk(
    tree: QueueTree, usage: QueueUsage, fair_share: IntArray, offers: Mapping[int, IntArray], as_victims: bool
) -> int | None:
    shares = allocatable_share(tree, fair_share)

    def best(candidates: tuple[int, ...]) -> tuple[int, IntArray] | None:
        """The best (leaf, offer) among ``candidates``, each standing for the best of its own subtree."""
        entries: list[tuple[int, int, IntArray]] = []  # (candidate, its best leaf, that leaf's offer)
        for queue in candidates:
            found = (
                ((queue, offers[queue]) if queue in offers else None)
                if tree.is_leaf(queue)
                else best(tree.children[queue])
            )
            if found is not None:
                entries.append((queue, *found))
        if not entries:
            return None
        amounts = np.stack([amount for _, _, amount in entries], axis=1)
        standings = queue_standings(
            tree,
            usage,
            fair_share,
            [queue for queue, _, _ in entries],
            jobs=None if as_victims else amounts,
            victims=amounts if as_victims else None,
            allocatable=shares,
        )
        chosen = 0
        for i in range(1, len(entries)):  # in age order: the first of equals stays chosen
            order = compare_queues(standings[i], standings[chosen])
            if (order > 0) if as_victims else (order < 0):
                chosen = i
        return entries[chosen][1], entries[chosen][2]

    result = best(tree.top)
    return None if result is None else result[0]


def elastic_rank(active: int, min_available: int) -> int:
    """0 below ``min_available`` active tasks, 1 exactly at it, 2 above it."""
    if active < min_available:
        return 0
    return 1 if active == min_available else 2


def job_order_key(job: Job, active: int, age: int) -> tuple[int, int, int, str]:
    """Sort key for jobs within a leaf: priority (higher first), elastic rank, age (older first), name.

    ``active``: the job's tasks currently allocated; ``age``: the job's position in the job list.
    """
    return (-job.priority, elastic_rank(active, job.min_available), age, job.name)


def victim_order_key(job: Job, active: int, age: int) -> tuple[int, int, int]:
    """The exact reverse of ``job_order_key`` (ages are unique): lowest priority, above-min, newest first."""
    return (job.priority, -elastic_rank(active, job.min_available), -age)
