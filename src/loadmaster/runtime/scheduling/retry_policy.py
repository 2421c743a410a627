"""Placement retry escalation (LRS F4, seed conflict #9, timeline-format "Reaction").

Attempts 1-4 are made at the scheduler's normal cadence (the next cycle a relevant change or the
safety tick starts); the 4th failed attempt sets a backoff, so attempt 5 comes ``BACKOFF`` after
attempt 4, and every later one ``BACKOFF`` after the one before ("attempts 1-4 at the safety tick,
then every 5 minutes"). A replica that cannot fit then stops costing a cycle's work and a condition
write every tick. Entering the backoff is logged once, at error level (LRS: "retry 5 gets a 5-minute
backoff and an error log"). The times are the plane clock's (``now`` is the cycle's). A backoff is cut
short when the cluster gains room that could fit the replica (``room_events.py``). A Failed replica is
never retried by the scheduler (A7): it is not Pending.

    next_attempt_at(attempts failed, now) = now + BACKOFF   if attempts >= ATTEMPTS_AT_CADENCE
                                          = next cycle       otherwise
"""

from __future__ import annotations

from datetime import datetime, timedelta

ATTEMPTS_AT_CADENCE = 4
BACKOFF = timedelta(minutes=5)


def next_attempt_after(attempts: int, now: datetime) -> datetime | None:
    """When a replica that has now failed ``attempts`` times may be tried again (None: next cycle)."""
    return now + BACKOFF if is_backoff(attempts) else None


def is_backoff(attempts: int) -> bool:
    """Whether ``attempts`` failed attempts put the replica in the backoff."""
    return attempts >= ATTEMPTS_AT_CADENCE


def enters_backoff(attempts: int) -> bool:
    """Whether this failed attempt is the one that starts the backoff (the one logged at error level)."""
    return attempts == ATTEMPTS_AT_CADENCE
