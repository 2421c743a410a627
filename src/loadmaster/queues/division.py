"""Dividing one amount of one resource among sibling queues (KAI's resource division, one level).

Phase 1 (deserved): every sibling gets ``min(deserved, requestable)``, where
``requestable = min(limit, demand)``. The sum may exceed the amount (deserved quotas can over-commit a
parent or the cluster); the leftover is then 0, never negative.

Phase 2 (over quota): the leftover goes to priority bands from high to low; a lower band only gets
what a higher one did not want. Within a band, rounds over the *hungry* siblings (weight > 0 and
share < requestable), each round dividing what is left at its start:

    slice(q) = left * weight(q) / sum(weight of hungry siblings)

A sibling that wants no more than its slice gets exactly what it wants (it is satisfied, and another
round re-divides what it left over). Otherwise it gets ``floor(slice / unit) * unit`` and its fraction
``slice - given`` is remembered. Rounds stop when nobody was satisfied below its slice. What the
floors left is then handed out at most one unit per sibling, largest remembered fraction first (ties:
older), never above a sibling's requestable. KAI's historical-usage term (kValue) is 0: there is no
usage history, so ``shareWeight = nW + k * (nW - 0)`` normalises back to the plain weight.

Exact arithmetic: amounts are integers and slices are ``Fraction``s, so the result is the same on every
machine. Each round satisfies at least one more sibling, and the unit hand-out visits each sibling
once, so the work is bounded by the number of siblings, never by the size of the amount.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True, slots=True)
class Claim:
    """One sibling's claim on one resource at one level of the tree."""

    deserved: int  # 0 when the queue's deserved does not name the resource
    requestable: int  # min(limit, allocated + pending request of the subtree)
    weight: float  # over_quota_weight; 0 = no share above deserved
    priority: int
    age: int  # smaller = older


def divide(amount: int, claims: Sequence[Claim], unit: int) -> list[int]:
    """Each claim's share of ``amount`` (same order as ``claims``); see the module docstring."""
    if unit <= 0:
        raise ValueError(f"division unit must be positive, got {unit}")
    shares = [min(claim.deserved, claim.requestable) for claim in claims]
    left = amount - sum(shares)
    for priority in sorted({claim.priority for claim in claims}, reverse=True):
        if left <= 0:
            break
        band = sorted(
            (i for i, claim in enumerate(claims) if claim.priority == priority), key=lambda i: claims[i].age
        )
        left = _divide_band(left, band, claims, shares, unit)
    return shares


def _divide_band(left: int, band: list[int], claims: Sequence[Claim], shares: list[int], unit: int) -> int:
    """Phase 2 for one priority band: updates ``shares`` in place and returns what is still left."""
    fractions: dict[int, Fraction] = {}
    while left > 0:
        hungry = [i for i in band if claims[i].weight > 0 and claims[i].requestable > shares[i]]
        if not hungry:
            break
        total_weight = sum(Fraction(claims[i].weight) for i in hungry)
        round_amount = left
        someone_left_some = False
        for i in hungry:
            slice_ = round_amount * Fraction(claims[i].weight) / total_weight
            wanted = claims[i].requestable - shares[i]
            if wanted <= slice_:
                given = wanted
                fractions.pop(i, None)
                someone_left_some = someone_left_some or wanted < slice_
            else:
                # Shares above deserved are handed out in whole units (whole GPUs), KAI's "round numbers".
                given = (slice_ // unit) * unit
                if slice_ > given:
                    fractions[i] = slice_ - given
            shares[i] += int(given)
            left -= int(given)
        if not someone_left_some:
            break
    for i in sorted(fractions, key=lambda i: (-fractions[i], claims[i].age)):
        if left <= 0:
            break
        given = min(unit, left, claims[i].requestable - shares[i])
        if given > 0:
            shares[i] += given
            left -= given
    return left
