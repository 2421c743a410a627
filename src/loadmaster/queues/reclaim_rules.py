"""Reclaim rules (KAI section 8): may a job take resources back from other queues, and from which.

Every function returns ``None`` when reclaim is allowed, else a reason. ``usage`` is the queue usage
*before* the candidate evictions (the victims still counted, the reclaimer's job not yet), as KAI's
validator works on the queue state cloned when the job's solution search starts.

* ``can_reclaim``: pre-check on the reclaimer's leaf: ``allocated + request <= fair_share`` in every
  resource; a non-preemptible reclaimer must also fit its deserved (``fits_non_preemptible_quota``).
* ``fits_reclaim_rules``: the validator for one set of victims. Victims are grouped per leaf queue and
  *leveled*: the reclaimer and the victim are replaced by their ancestors that are children of their
  lowest common ancestor. Before each victim chunk is subtracted, one strategy must hold on the
  leveled victim queue's remaining allocation:

  - MaintainFairShare: ``remaining > allocatable_share`` in at least one resource;
  - GuaranteeDeservedQuota: the leveled reclaimer's ``allocated + request`` is within its deserved,
    and ``remaining > deserved`` in at least one resource the victim's deserved governs.

  Then, at the reclaimer's leaf and each ancestor ``a``, against every sibling ``s`` that lost
  resources, per resource involved (requested, or taken from ``s``'s subtree):
  ``ratio(a) = (allocated(a) + request) / fair_share(a)``; refused if ``ratio(a) > 1``,
  ``fair_share(s) > 0`` and ``ratio(a) * multiplier >= remaining(s) / fair_share(s)``.

Consequence: a queue at or below both its deserved and its fair share is never reclaimed from.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from loadmaster.core.resources import format_quantity
from loadmaster.queues.capacity import fits_non_preemptible_quota
from loadmaster.queues.entitlement import (
    allocatable_share,
    describe_amounts,
    exceeds_deserved,
    is_within_deserved,
)
from loadmaster.queues.hierarchy import BoolArray, IntArray, QueueTree
from loadmaster.queues.usage import QueueUsage

# KAI's default relcaimerSaturationMultiplier: the reclaimer must end strictly less saturated than the
# sibling it takes from, by this factor.
RECLAIMER_SATURATION_MULTIPLIER = 1.0


@dataclass(frozen=True, slots=True)
class Reclaimer:
    """The job that wants resources back: its leaf queue, what it would allocate now, its preemptibility."""

    queue: int
    request: IntArray
    preemptible: bool


@dataclass(frozen=True, slots=True)
class VictimChunk:
    """Resources evicted together from one leaf queue: a job's core (min_available) tasks, or one task."""

    queue: int
    request: IntArray


def can_reclaim(usage: QueueUsage, tree: QueueTree, fair_share: IntArray, reclaimer: Reclaimer) -> str | None:
    """Reclaimer pre-check: the job keeps its leaf within fair share in every resource."""
    leaf, request = reclaimer.queue, reclaimer.request
    wanted = usage.allocated[:, leaf] + request
    over = np.flatnonzero(wanted > fair_share[:, leaf])
    if over.size:
        r = int(over[0])
        resource = tree.resources[r]
        return (
            f"queue {tree.names[leaf]} fair share {resource}: "
            f"{format_quantity(resource, int(usage.allocated[r, leaf]))} allocated + "
            f"{format_quantity(resource, int(request[r]))} requested > "
            f"{format_quantity(resource, int(fair_share[r, leaf]))}: it may not reclaim"
        )
    return None if reclaimer.preemptible else fits_non_preemptible_quota(usage, tree, leaf, request)


def may_reclaim_from(
    usage: QueueUsage, tree: QueueTree, fair_share: IntArray, reclaimer: Reclaimer, victim_leaf: int
) -> str | None:
    """Cheap victim filter: refuses a victim queue no strategy could allow even before any eviction.

    Sound because the strategies only get harder as the victim's remaining allocation shrinks.
    """
    leveled, victim = tree.leveled(reclaimer.queue, victim_leaf)
    shares = allocatable_share(tree, fair_share)
    wanted = usage.allocated[:, leveled] + reclaimer.request
    return _strategy_refusal(tree, shares, (leveled, wanted), victim, usage.allocated[:, victim])


def fits_reclaim_rules(
    usage: QueueUsage,
    tree: QueueTree,
    fair_share: IntArray,
    reclaimer: Reclaimer,
    chunks: Sequence[VictimChunk],
    *,
    saturation_multiplier: float = RECLAIMER_SATURATION_MULTIPLIER,
) -> str | None:
    """Validate evicting ``chunks`` (in the given order) so that ``reclaimer`` can be placed."""
    shares = allocatable_share(tree, fair_share)
    remaining: dict[int, IntArray] = {}
    involved: dict[int, BoolArray] = {}
    for chunk in _grouped_by_queue(chunks):
        if chunk.queue == reclaimer.queue:
            raise ValueError(f"queue {tree.names[chunk.queue]}: reclaim victims must belong to other queues")
        leveled, victim = tree.leveled(reclaimer.queue, chunk.queue)
        left = remaining.setdefault(victim, usage.allocated[:, victim].copy())
        wanted = usage.allocated[:, leveled] + reclaimer.request
        refusal = _strategy_refusal(tree, shares, (leveled, wanted), victim, left)
        if refusal is not None:
            return refusal
        for queue in tree.paths[chunk.queue].tolist():
            remaining.setdefault(queue, usage.allocated[:, queue].copy())
            remaining[queue] -= chunk.request
            taken = involved.get(queue, np.zeros(len(tree.resources), dtype=np.bool_))
            involved[queue] = taken | (chunk.request > 0)
    refusal = _saturation_refusal(
        usage, tree, fair_share, reclaimer, (remaining, involved), multiplier=saturation_multiplier
    )
    if refusal is not None or reclaimer.preemptible:
        return refusal
    return fits_non_preemptible_quota(usage, tree, reclaimer.queue, reclaimer.request)


def maintains_fair_share(shares: IntArray, victim: int, remaining: IntArray) -> bool:
    """MaintainFairShare: the victim queue keeps more than its allocatable share in some resource."""
    return bool(np.any(remaining > shares[:, victim]))


def guarantees_deserved_quota(
    tree: QueueTree, reclaimer_wants: IntArray, reclaimer: int, victim: int, remaining: IntArray
) -> bool:
    """GuaranteeDeservedQuota: the reclaimer (holding ``reclaimer_wants`` with the job) stays within
    its deserved, and the victim keeps more than its own deserved in some resource."""
    return is_within_deserved(tree, reclaimer, reclaimer_wants) and exceeds_deserved(tree, victim, remaining)


def _strategy_refusal(
    tree: QueueTree, shares: IntArray, reclaim: tuple[int, IntArray], victim: int, remaining: IntArray
) -> str | None:
    """Why neither strategy lets the (leveled) reclaimer take from the (leveled) victim, or None.

    ``reclaim`` = (leveled reclaimer queue, its allocation with the job).
    """
    reclaimer, wanted = reclaim
    if maintains_fair_share(shares, victim, remaining):
        return None
    if guarantees_deserved_quota(tree, wanted, reclaimer, victim, remaining):
        return None
    governed = tree.deserved_set[:, reclaimer]
    if not is_within_deserved(tree, reclaimer, wanted):
        why = (
            f"queue {tree.names[reclaimer]} has no deserved quota"
            if not governed.any()
            else f"queue {tree.names[reclaimer]} would hold {describe_amounts(tree, wanted, governed)}, "
            f"beyond its deserved {describe_amounts(tree, tree.deserved[:, reclaimer], governed)}"
        )
    else:
        deserved = describe_amounts(tree, tree.deserved[:, victim], tree.deserved_set[:, victim])
        why = f"it is not above its deserved ({deserved})"
    return (
        f"queue {tree.names[victim]} may not be reclaimed from: it would keep "
        f"{describe_amounts(tree, remaining)}, not above its allocatable share "
        f"{describe_amounts(tree, shares[:, victim])}, and {why}"
    )


def _saturation_refusal(
    usage: QueueUsage,
    tree: QueueTree,
    fair_share: IntArray,
    reclaimer: Reclaimer,
    taken: tuple[dict[int, IntArray], dict[int, BoolArray]],
    *,
    multiplier: float,
) -> str | None:
    """The reclaimer's leaf and ancestors must end less saturated than every sibling they take from."""
    remaining, involved = taken
    request = reclaimer.request
    for queue in tree.paths[reclaimer.queue].tolist():
        mine = remaining.get(queue, usage.allocated[:, queue]) + request
        for sibling in tree.siblings(queue):
            if sibling == queue or sibling not in remaining:
                continue
            for r in np.flatnonzero(involved[sibling] | (request > 0)).tolist():
                ratio = _saturation(int(mine[r]), int(fair_share[r, queue]))
                sibling_ratio = _saturation(int(remaining[sibling][r]), int(fair_share[r, sibling]))
                if ratio > 1 and fair_share[r, sibling] > 0 and ratio * multiplier >= sibling_ratio:
                    return (
                        f"queue {tree.names[queue]} would hold {ratio:.2f}x its fair share of "
                        f"{tree.resources[r]}, not below queue {tree.names[sibling]}'s {sibling_ratio:.2f}x "
                        f"after the evictions"
                    )
    return None


def _saturation(allocated: int, fair_share: int) -> float:
    if fair_share == 0:
        return math.inf if allocated > 0 else 0.0
    return allocated / fair_share


def _grouped_by_queue(chunks: Sequence[VictimChunk]) -> list[VictimChunk]:
    """Chunks grouped per victim queue (queues in order of first appearance, chunks in given order)."""
    order: dict[int, list[VictimChunk]] = {}
    for chunk in chunks:
        order.setdefault(chunk.queue, []).append(chunk)
    return [chunk for group in order.values() for chunk in group]
