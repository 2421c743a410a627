"""Which queue goes next, and which job within a queue (KAI's queue order and job order).

Queue comparison, first difference wins (``compare_queues``):

1. not over-utilised before over-utilised; over-utilised = ``fair_share < allocated`` in *every* resource;
2. starved first: ``allocated + job`` within the queue's deserved (``entitlement.is_within_deserved``);
3. higher queue priority;
4. a queue that would use a resource whose allocatable share is 0 goes last;
5. smaller dominant share with the job (and minus victims already taken, for victim queues):
   ``max_r (allocated[r] + job[r] - victims[r]) / allocatable[r]``;
6. smaller dominant share without the job: ``max_r allocated[r] / allocatable[r]``;
7. smaller allocatable share: ``<=`` in every resource and ``<`` in one;
8. older queue.

``allocatable[r] = min(limit, max(deserved, fair_share))``; where it is 0, the term is
``allocated (user units) * ZERO_SHARE_PENALTY`` instead of a division by zero.

The tree walk compares siblings at each level, each represented by its own usage and the best job of
its best leaf, down to a leaf. Victim queues use the same comparison reversed.
Job order within a leaf: higher priority, then elastic state (below ``min_available`` < at it < above
it), then older, then name. Victim order is the reverse.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from loadmaster.core.model import Job
from loadmaster.core.resources import scale_of
from loadmaster.queues.entitlement import allocatable_share, is_within_deserved
from loadmaster.queues.hierarchy import IntArray, QueueTree
from loadmaster.queues.usage import QueueUsage

# KAI's noFairShareDrfMultiplier: using a resource the queue has no share of ranks it far behind.
ZERO_SHARE_PENALTY = 1000


@dataclass(frozen=True, slots=True)
class QueueStanding:
    """Everything the queue comparison looks at, for one queue and its candidate job."""

    queue: int
    over_utilised: bool
    starved: bool
    priority: int
    uses_zero_share: bool
    dominant_share_with_job: float
    dominant_share: float
    allocatable_share: tuple[int, ...]
    age: int


def dominant_share(tree: QueueTree, amount: IntArray, allocatable: IntArray) -> float:
    """``max_r amount[r] / allocatable[r]`` (0 for nothing); a zero allocatable share gets the penalty."""
    share = 0.0
    for r, resource in enumerate(tree.resources):
        if allocatable[r] == 0:
            value = float(amount[r]) / scale_of(resource) * ZERO_SHARE_PENALTY
        else:
            value = float(amount[r]) / float(allocatable[r])
        share = max(share, value)
    return share


def queue_standing(
    tree: QueueTree,
    usage: QueueUsage,
    fair_share: IntArray,
    queue: int,
    *,
    job_request: IntArray | None = None,
    victims_request: IntArray | None = None,
    allocatable: IntArray | None = None,
) -> QueueStanding:
    """The queue's standing with its candidate job (``None``: no job) and victims already taken.

    ``allocatable`` is ``allocatable_share(tree, fair_share)``, accepted precomputed to save work.
    """
    shares = allocatable_share(tree, fair_share) if allocatable is None else allocatable
    allocated = usage.allocated[:, queue]
    own_share = shares[:, queue]
    with_job = allocated if job_request is None else allocated + job_request
    with_job_minus_victims = with_job if victims_request is None else with_job - victims_request
    return QueueStanding(
        queue=queue,
        over_utilised=bool(np.all(fair_share[:, queue] < allocated)),
        starved=is_within_deserved(tree, queue, with_job),
        priority=tree.priority[queue],
        uses_zero_share=bool(np.any((own_share == 0) & (with_job > 0))),
        dominant_share_with_job=dominant_share(tree, with_job_minus_victims, own_share),
        dominant_share=dominant_share(tree, allocated, own_share),
        allocatable_share=tuple(int(x) for x in own_share),
        age=queue,
    )


def compare_queues(a: QueueStanding, b: QueueStanding) -> int:
    """Negative if ``a`` goes first, positive if ``b`` does, 0 only for the same queue."""
    if a.over_utilised != b.over_utilised:
        return 1 if a.over_utilised else -1
    if a.starved != b.starved:
        return -1 if a.starved else 1
    if a.priority != b.priority:
        return -1 if a.priority > b.priority else 1
    if a.uses_zero_share != b.uses_zero_share:
        return 1 if a.uses_zero_share else -1
    if a.dominant_share_with_job != b.dominant_share_with_job:
        return -1 if a.dominant_share_with_job < b.dominant_share_with_job else 1
    if a.dominant_share != b.dominant_share:
        return -1 if a.dominant_share < b.dominant_share else 1
    if _dominated(a.allocatable_share, b.allocatable_share):
        return -1
    if _dominated(b.allocatable_share, a.allocatable_share):
        return 1
    return (a.age > b.age) - (a.age < b.age)


# Sort key form of compare_queues: ``sorted(standings, key=queue_order_key)``.
queue_order_key = functools.cmp_to_key(compare_queues)


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
        chosen: tuple[QueueStanding, int, IntArray] | None = None
        for queue in candidates:  # age order, so ties the comparison cannot break stay deterministic
            if tree.is_leaf(queue):
                if queue not in offers:
                    continue
                found: tuple[int, IntArray] | None = (queue, offers[queue])
            else:
                found = best(tree.children[queue])
            if found is None:
                continue
            leaf, amount = found
            standing = (
                queue_standing(tree, usage, fair_share, queue, victims_request=amount, allocatable=shares)
                if as_victims
                else queue_standing(tree, usage, fair_share, queue, job_request=amount, allocatable=shares)
            )
            if chosen is None or _goes_first(standing, chosen[0], as_victims):
                chosen = (standing, leaf, amount)
        return None if chosen is None else (chosen[1], chosen[2])

    result = best(tree.top)
    return None if result is None else result[0]


def _goes_first(candidate: QueueStanding, current: QueueStanding, as_victims: bool) -> bool:
    order = compare_queues(candidate, current)
    return order > 0 if as_victims else order < 0


def _dominated(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return all(x <= y for x, y in zip(a, b, strict=True)) and any(x < y for x, y in zip(a, b, strict=True))


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
