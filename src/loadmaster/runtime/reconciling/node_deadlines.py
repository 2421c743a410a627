"""When each Ready node goes stale: ``last_heartbeat + window``, kept as the cache changes, earliest first.

A heap with lazy deletion: every heartbeat pushes the node's new deadline and leaves the old entry in
place; ``earliest()`` drops entries that are no longer the node's current deadline. A heartbeat costs
O(log n), and finding the next node to go stale costs O(1) amortised, so a cluster of thousands of nodes
heartbeating every 30 s never walks all of them.
"""

from __future__ import annotations

import heapq
from datetime import datetime, timedelta

from loadmaster.core.heartbeat import stale_at
from loadmaster.manifests.timestamps import parse_timestamp
from loadmaster.runtime.plane.object_cache import Cached

_NOT_READY = "NotReady"


class NodeDeadlines:
    def __init__(self, window: timedelta) -> None:
        self._window = window
        self._deadline: dict[str, datetime] = {}
        self._heap: list[tuple[datetime, str]] = []

    def follow(self, name: str, cached: Cached | None) -> None:
        """The node as the cache now holds it (None: deleted). Only Ready nodes have a deadline."""
        status = {} if cached is None else cached.obj.get("status", {})
        heartbeat = status.get("last_heartbeat")
        if cached is None or status.get("state") == _NOT_READY or heartbeat is None:
            self._deadline.pop(name, None)
            return
        deadline = stale_at(parse_timestamp(heartbeat), self._window)
        assert deadline is not None
        if self._deadline.get(name) != deadline:
            self._deadline[name] = deadline
            heapq.heappush(self._heap, (deadline, name))

    def earliest(self) -> datetime | None:
        """The earliest deadline of a Ready node (None: no Ready node)."""
        heap = self._heap
        while heap and self._deadline.get(heap[0][1]) != heap[0][0]:
            heapq.heappop(heap)
        return heap[0][0] if heap else None
