"""Placement retry escalation (LRS F4, seed conflict #9).

Attempts 1-4 are retried at the scheduler's normal cadence (the next cycle a relevant change or the
safety tick starts); from the 5th failed attempt on, the replica waits ``BACKOFF`` before it is tried
again, so a replica that cannot fit stops costing a cycle's work and a condition write every time.
A Failed replica is never retried by the scheduler (A7): it is not Pending.
"""

from __future__ import annotations

from datetime import datetime, timedelta

ATTEMPTS_AT_CADENCE = 4
BACKOFF = timedelta(minutes=5)


def next_attempt_after(attempts: int, now: datetime) -> datetime | None:
    """When a replica that has now failed ``attempts`` times may be tried again (None: next cycle)."""
    return now + BACKOFF if attempts > ATTEMPTS_AT_CADENCE else None


def is_backoff(attempts: int) -> bool:
    return attempts > ATTEMPTS_AT_CADENCE
