"""A queue's standing for the queue comparison (KAI's queue order), and the comparison itself.

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
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from loadmaster.queues.entitlement import allocatable_share
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


def dominant_shares(tree: QueueTree, amount: IntArray, allocatable: IntArray) -> npt.NDArray[np.float64]:
    """Per column: ``max(0, max_r amount[r] / allocatable[r])``, with the penalty where allocatable is 0."""
    ratio: npt.NDArray[np.float64] = amount / tree.scale[:, None] * ZERO_SHARE_PENALTY
    np.divide(amount, allocatable, out=ratio, where=allocatable > 0)
    share: npt.NDArray[np.float64] = np.zeros(ratio.shape[1], dtype=np.float64)
    if ratio.shape[0]:  # no resources at all: every share is 0
        np.maximum(ratio.max(axis=0), share, out=share)
    return share


def dominant_share(tree: QueueTree, amount: IntArray, allocatable: IntArray) -> float:
    """One queue's dominant share: ``dominant_shares`` of a single column."""
    return float(dominant_shares(tree, amount[:, None], allocatable[:, None])[0])


def queue_standings(
    tree: QueueTree,
    usage: QueueUsage,
    fair_share: IntArray,
    queues: Sequence[int],
    *,
    jobs: IntArray | None = None,
    victims: IntArray | None = None,
    allocatable: IntArray | None = None,
) -> list[QueueStanding]:
    """Standings of several queues at once; ``jobs`` / ``victims`` are (resources, len(queues)) arrays.

    Vectorised over the queues because the tree walk compares whole sibling groups on every pop.
    """
    columns = list(queues)
    shares = (allocatable_share(tree, fair_share) if allocatable is None else allocatable)[:, columns]
    allocated = usage.allocated[:, columns]
    with_job = allocated if jobs is None else allocated + jobs
    with_job_minus_victims = with_job if victims is None else with_job - victims
    governed = tree.deserved_set[:, columns]
    within = np.asarray(((with_job <= tree.deserved[:, columns]) | ~governed).all(axis=0))
    over = np.asarray((fair_share[:, columns] < allocated).all(axis=0))
    starved = np.asarray(governed.any(axis=0)) & within  # entitlement.is_within_deserved, per column
    zero = np.asarray(((shares == 0) & (with_job > 0)).any(axis=0))
    rows = zip(
        columns,
        over.tolist(),
        starved.tolist(),
        zero.tolist(),
        dominant_shares(tree, with_job_minus_victims, shares).tolist(),
        dominant_shares(tree, allocated, shares).tolist(),
        shares.T.tolist(),
        strict=True,
    )
    return [
        QueueStanding(q, over, starved, tree.priority[q], zero, with_job_share, share, tuple(own), q)
        for q, over, starved, zero, with_job_share, share, own in rows
    ]


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
    """One queue's standing with its candidate job (``None``: no job) and the victims already taken."""
    jobs = None if job_request is None else job_request[:, None]
    victims = None if victims_request is None else victims_request[:, None]
    return queue_standings(
        tree, usage, fair_share, [queue], jobs=jobs, victims=victims, allocatable=allocatable
    )[0]


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


Rank = tuple[bool, bool, int, bool, float, float]


def rank_of(standing: QueueStanding) -> Rank:
    """Rules 1-6 as one tuple, smaller first: where two ranks differ, ``compare_queues(a, b) < 0`` exactly
    when ``rank_of(a) < rank_of(b)``; where they are equal, rules 7-8 decide (``compare_queues``).

    Lets a caller that compares the same standings again and again compare tuples instead.
    """
    return (
        standing.over_utilised,
        not standing.starved,
        -standing.priority,
        standing.uses_zero_share,
        standing.dominant_share_with_job,
        standing.dominant_share,
    )


# Sort key form of compare_queues: ``sorted(standings, key=queue_order_key)``.
queue_order_key = functools.cmp_to_key(compare_queues)


def _dominated(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return all(x <= y for x, y in zip(a, b, strict=True)) and any(x < y for x, y in zip(a, b, strict=True))
