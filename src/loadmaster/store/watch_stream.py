"""Resumable watches shared by the in-process backends: replay stored history, then stream live events.

A watch subscribes to live events *before* it reads history, so nothing committed in between is
lost; events it has already replayed are recognised by revision and skipped. Live events wait in a
bounded per-watcher queue. A watcher that falls too far behind is marked ``overflowed`` instead of
buffering without limit: it drains what it has (whole revisions only), then catches up from the
stored history again, which raises CompactedError if that history is gone by then.

Everything here runs on one event loop thread; ``publish`` is called there after each commit.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass

from loadmaster.store.interface import Event, UnavailableError

# A watcher may hold this many undelivered live events before it falls back to reading history.
DEFAULT_MAX_QUEUED_EVENTS = 10_000
# The history an in-process backend keeps for watches to replay, in revisions (older: CompactedError).
DEFAULT_HISTORY_REVISIONS = 100_000


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """Stored events under a prefix with ``start <= revision <= through``, in revision order.

    ``current`` is the store revision the page was read at; the watch is caught up once
    ``through >= current``. Backends raise CompactedError instead of returning a page when the start
    revision is older than the retained history.
    """

    events: list[Event]
    through: int
    current: int


HistoryReader = Callable[[str, int], HistoryPage]


class Subscription:
    """One watcher's queue of live events (whole revisions only) and its wake-up signal."""

    __slots__ = ("_wake", "closed_reason", "max_queued", "overflowed", "prefix", "queue")

    def __init__(self, prefix: str, max_queued: int) -> None:
        self.prefix = prefix
        self.max_queued = max_queued
        self.queue: deque[Event] = deque()
        self.overflowed = False
        self.closed_reason: str | None = None
        self._wake = asyncio.Event()

    def offer(self, events: Sequence[Event]) -> None:
        """Queue one commit's matching events, or mark the watcher overflowed (never a partial commit)."""
        if self.overflowed:
            return
        if len(self.queue) + len(events) > self.max_queued:
            self.overflowed = True
        else:
            self.queue.extend(events)
        self._wake.set()

    def close(self, reason: str) -> None:
        self.closed_reason = reason
        self._wake.set()

    async def wait(self) -> None:
        await self._wake.wait()
        self._wake.clear()


class WatchHub:
    """Fans committed events out to the live subscriptions whose prefix matches."""

    def __init__(self, max_queued_events: int = DEFAULT_MAX_QUEUED_EVENTS) -> None:
        if max_queued_events < 1:
            raise ValueError(f"max_queued_events: must be >= 1, got {max_queued_events}")
        self.max_queued_events = max_queued_events
        # A dict keeps insertion order, so fan-out order is deterministic.
        self._subscriptions: dict[Subscription, None] = {}

    def subscribe(self, prefix: str) -> Subscription:
        subscription = Subscription(prefix, self.max_queued_events)
        self._subscriptions[subscription] = None
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self._subscriptions.pop(subscription, None)

    def publish(self, events: Sequence[Event]) -> None:
        """Deliver the events of one commit (all with the same revision) to every matching watcher."""
        for subscription in self._subscriptions:
            matching = [event for event in events if event.key.startswith(subscription.prefix)]
            if matching:
                subscription.offer(matching)

    def close(self, reason: str) -> None:
        """End every watch with UnavailableError(reason), after it has drained what it already holds."""
        for subscription in self._subscriptions:
            subscription.close(reason)
        self._subscriptions.clear()


def check_start_revision(start_revision: object) -> int:
    if isinstance(start_revision, bool) or not isinstance(start_revision, int):
        raise TypeError(f"start_revision: must be an int, got {type(start_revision).__name__}")
    if start_revision < 0:
        raise ValueError(f"start_revision: must be >= 0, got {start_revision}")
    return start_revision


async def stream_events(
    hub: WatchHub, read_history: HistoryReader, prefix: str, start_revision: int
) -> AsyncIterator[Event]:
    """Every event under ``prefix`` with revision >= ``start_revision``, in order, forever.

    ``next_revision`` is the first revision not yet delivered in full: history pages always end on a
    whole revision, and a queue always holds whole revisions, so it is exact at each catch-up.
    """
    subscription = hub.subscribe(prefix)
    try:
        next_revision = start_revision
        while True:
            while True:  # catch up from stored history
                page = read_history(prefix, next_revision)
                for event in page.events:
                    yield event
                next_revision = max(next_revision, page.through + 1)
                if page.through >= page.current:
                    break
            last_delivered = next_revision - 1
            while True:  # stream live events
                if subscription.queue:
                    event = subscription.queue.popleft()
                    if event.revision >= next_revision:  # older ones were already replayed
                        last_delivered = event.revision
                        yield event
                elif subscription.overflowed:
                    break
                elif subscription.closed_reason is not None:
                    raise UnavailableError(subscription.closed_reason)
                else:
                    await subscription.wait()
            # Overflowed: everything queued was delivered; resume from history after it. Reset the
            # flag first so commits that land while we read history are queued, not dropped.
            next_revision = last_delivered + 1
            subscription.overflowed = False
    finally:
        hub.unsubscribe(subscription)
