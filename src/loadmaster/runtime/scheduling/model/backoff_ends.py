"""When the Pending replicas' backoffs end: the first end ahead and how many are ahead, in O(log n).

The scheduler asks both after every pass (its gauge of replicas backing off, and when to wake for the
first backoff to end), and a pass follows every change a cycle should look at: with 10,000 Pending
replicas, a scan of them all was ~5-10 ms on the event loop each time (``bench/busy_cycle.py``).

A heap of ``(end, name)``, with each Pending replica's current end in ``_ahead`` (name -> end). A
replica's change replaces its entry in ``_ahead`` and pushes the new one; entries that no longer match
``_ahead`` are dropped when they reach the top. ``at(now)`` first drops every entry that ended by
``now`` (``now`` does not go back: the scheduler's clock is monotonic in its readings of wall time, and
a reading that did go back only wakes the scheduler later, at the safety tick). When stale entries
outnumber the live ones, the heap is rebuilt from ``_ahead``: each change costs O(log n) amortised.
"""

from __future__ import annotations

import heapq
from datetime import datetime

# Rebuild the heap when it holds more than this many times the live entries (plus a floor).
STALE_RATIO = 2
STALE_FLOOR = 1024


class BackoffEnds:
    def __init__(self) -> None:
        self._heap: list[tuple[datetime, str]] = []
        self._ahead: dict[str, datetime] = {}

    def set(self, name: str, end: datetime | None) -> None:
        """The replica's backoff ends at ``end`` (None: it is not Pending, or has no backoff)."""
        if end is None:
            self._ahead.pop(name, None)
            return
        if self._ahead.get(name) == end:
            return
        self._ahead[name] = end
        heapq.heappush(self._heap, (end, name))
        if len(self._heap) > STALE_RATIO * len(self._ahead) + STALE_FLOOR:
            self._heap = [(when, who) for who, when in self._ahead.items()]
            heapq.heapify(self._heap)

    def at(self, now: datetime) -> tuple[int, datetime | None]:
        """How many backoffs end after ``now``, and the first of them (None: none does)."""
        heap, ahead = self._heap, self._ahead
        while heap:
            end, name = heap[0]
            current = ahead.get(name)
            if current == end and end > now:
                break
            heapq.heappop(heap)
            if current == end:  # ended by now: no longer ahead
                del ahead[name]
        return len(ahead), heap[0][0] if heap else None
