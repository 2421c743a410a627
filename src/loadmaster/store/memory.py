"""MemoryStore: the reference Store, in process, for tests, the simulator and single-process runs.

Every method does its work synchronously between two awaits, so on one event loop each call is
atomic without locks. History is kept per revision in a deque bounded by ``history_revisions``
(etcd-style compaction), which makes CompactedError reachable in tests; ``compact`` drops history
explicitly, as etcd's compact call does.
"""

from __future__ import annotations

import bisect
import itertools
from collections import deque
from collections.abc import AsyncIterator, Sequence

from loadmaster.store.interface import (
    CompactedError,
    Entry,
    Event,
    Fence,
    Op,
    UnavailableError,
)
from loadmaster.store.keys import check_key, check_prefix, prefix_end
from loadmaster.store.revisions_by_group import RevisionsByGroup
from loadmaster.store.txn_rules import SingleKeyWrites, plan_txn, validate_txn
from loadmaster.store.watch_stream import (
    DEFAULT_HISTORY_REVISIONS,
    DEFAULT_MAX_QUEUED_EVENTS,
    HistoryPage,
    WatchHub,
    check_start_revision,
    stream_events,
)


class MemoryStore(SingleKeyWrites):
    """In-process Store with etcd semantics (see interface.py)."""

    def __init__(
        self,
        *,
        history_revisions: int = DEFAULT_HISTORY_REVISIONS,
        max_queued_events: int = DEFAULT_MAX_QUEUED_EVENTS,
    ) -> None:
        if history_revisions < 1:
            raise ValueError(f"history_revisions: must be >= 1, got {history_revisions}")
        self.history_revisions = history_revisions
        self._entries: dict[str, Entry] = {}
        self._sorted_keys: list[str] = []
        self._revision = 0
        # Invariant: _history[i] holds the events of revision _oldest + i, for every revision up to
        # _revision (each revision has at least one event, since no-op txns do not bump it).
        self._history: deque[tuple[Event, ...]] = deque()
        self._oldest = 1
        self._written = RevisionsByGroup()  # known_revision's
        self._hub = WatchHub(max_queued_events)
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise UnavailableError("memory store is closed")

    async def get(self, key: str) -> Entry | None:
        self._check_open()
        return self._entries.get(check_key(key))

    async def list(self, prefix: str) -> tuple[list[Entry], int]:
        self._check_open()
        check_prefix(prefix)
        start = bisect.bisect_left(self._sorted_keys, prefix)
        end_key = prefix_end(prefix)
        stop = len(self._sorted_keys) if end_key is None else bisect.bisect_left(self._sorted_keys, end_key)
        return [self._entries[key] for key in self._sorted_keys[start:stop]], self._revision

    async def txn(self, ops: Sequence[Op], fence: Fence | None = None) -> int:
        self._check_open()
        validate_txn(ops, fence)
        mod_revisions = {op.key: entry.mod_revision for op in ops if (entry := self._entries.get(op.key))}
        fence_entry = self._entries.get(fence.key) if fence is not None else None
        events = plan_txn(
            ops,
            fence,
            mod_revisions,
            fence_entry.create_revision if fence_entry is not None else None,
            self._revision + 1,
        )
        if not events:
            return self._revision
        for event in events:
            self._apply(event)
        self._revision += 1
        self._written.record((event.key for event in events), self._revision)
        self._remember(tuple(events))
        self._hub.publish(events)
        return self._revision

    def _apply(self, event: Event) -> None:
        previous = self._entries.get(event.key)
        if event.value is None:
            del self._entries[event.key]
            del self._sorted_keys[bisect.bisect_left(self._sorted_keys, event.key)]
            return
        if previous is None:
            bisect.insort(self._sorted_keys, event.key)
        create_revision = event.revision if previous is None else previous.create_revision
        self._entries[event.key] = Entry(event.key, event.value, create_revision, event.revision)

    def _remember(self, events: tuple[Event, ...]) -> None:
        self._history.append(events)
        while len(self._history) > self.history_revisions:
            self._history.popleft()
            self._oldest += 1

    async def revision(self) -> int:
        self._check_open()
        return self._revision

    def known_revision(self, prefix: str = "/") -> int | None:
        return self._written.under(prefix)

    async def compact(self, revision: int) -> None:
        """Drop the history of every revision older than ``revision`` (watches from there on still work)."""
        self._check_open()
        if revision > self._revision:
            raise ValueError(f"revision: cannot compact to {revision}, the store is at {self._revision}")
        while self._oldest < revision:
            self._history.popleft()
            self._oldest += 1

    def watch(self, prefix: str, start_revision: int) -> AsyncIterator[Event]:
        self._check_open()
        check_prefix(prefix)
        check_start_revision(start_revision)
        return stream_events(self._hub, self._read_history, prefix, start_revision)

    def _read_history(self, prefix: str, start_revision: int) -> HistoryPage:
        self._check_open()
        start = max(start_revision, 1)  # revision 0 is "before the first write"
        if start < self._oldest:
            raise CompactedError(start_revision, self._oldest)
        events = [
            event
            for batch in itertools.islice(self._history, start - self._oldest, None)
            for event in batch
            if event.key.startswith(prefix)
        ]
        return HistoryPage(events, self._revision, self._revision)

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._hub.close("memory store is closed")
