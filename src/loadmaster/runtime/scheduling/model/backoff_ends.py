"""When the Pending replicas' backoffs end: how many end after ``now`` and the first of them, at once.

The scheduler asks both after its passes (its gauge of replicas backing off, and when to wake for the
first backoff to end): with 10,000 Pending replicas, a scan of them all was ~5-10 ms on the event
loop each time (``bench/busy_cycle.py``).

The ends are kept sorted, as ``(end, name)`` in a plain list: a replica's change removes its old entry
and inserts the new one by bisection (O(log n) comparisons and one memmove of at most n pointers, a
few microseconds at 10,000), and with ``i = bisect_right(ends, (now, MAX_NAME))``::

    ahead(now) = n - i            first_end(now) = ends[i].end   (none when i = n)

A heap with lazy deletion was tried first: a cycle that rewrites every backoff leaves as many stale
entries, popped all in one go by the next reading (20-40 ms).
"""

from __future__ import annotations

import bisect
from datetime import datetime

MAX_NAME = "\U0010ffff"  # sorts after every name: (now, MAX_NAME) is past every entry ending at now


class BackoffEnds:
    def __init__(self) -> None:
        self._ends: list[tuple[datetime, str]] = []
        self._end_of: dict[str, datetime] = {}

    def set(self, name: str, end: datetime | None) -> None:
        """The replica's backoff ends at ``end`` (None: it is not Pending, or has no backoff)."""
        old = self._end_of.get(name)
        if old == end:
            return
        if old is not None:
            del self._ends[bisect.bisect_left(self._ends, (old, name))]
            del self._end_of[name]
        if end is not None:
            bisect.insort(self._ends, (end, name))
            self._end_of[name] = end

    def at(self, now: datetime) -> tuple[int, datetime | None]:
        """How many backoffs end after ``now``, and the first of them (None: none does)."""
        ends = self._ends
        first = bisect.bisect_right(ends, (now, MAX_NAME))
        return len(ends) - first, ends[first][0] if first < len(ends) else None
