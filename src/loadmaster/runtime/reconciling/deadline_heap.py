"""Named deadlines on the virtual or real clock, earliest first: the controller loop's timers.

A heap with lazy deletion, like ``node_deadlines.py``: setting a name's deadline pushes an entry and
leaves the old one in place; stale entries are dropped as they surface. ``pop_due(now)`` hands out the
names whose deadline has come (once each), so ``earliest()`` is always still ahead and the loop sleeps
until then: a timer, not a tick.
"""

from __future__ import annotations

import heapq
from datetime import datetime


class DeadlineHeap:
    def __init__(self) -> None:
        self._deadline: dict[str, datetime] = {}
        self._heap: list[tuple[datetime, str]] = []

    def set(self, name: str, deadline: datetime | None) -> None:
        """``name``'s deadline from now on (None: it has none any more)."""
        if deadline is None:
            self._deadline.pop(name, None)
        elif self._deadline.get(name) != deadline:
            self._deadline[name] = deadline
            heapq.heappush(self._heap, (deadline, name))

    def _drop_stale(self) -> None:
        heap = self._heap
        while heap and self._deadline.get(heap[0][1]) != heap[0][0]:
            heapq.heappop(heap)

    def earliest(self) -> datetime | None:
        self._drop_stale()
        return self._heap[0][0] if self._heap else None

    def pop_due(self, now: datetime) -> list[str]:
        """The names whose deadline is at or before ``now``; they have no deadline afterwards."""
        due: list[str] = []
        while (earliest := self.earliest()) is not None and earliest <= now:
            _, name = heapq.heappop(self._heap)
            del self._deadline[name]
            due.append(name)
        return due
