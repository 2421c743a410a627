"""One store watch shared by every live watcher, so a write costs the same with 1 or 1,000 streams open.

Each watcher of its own would be one more subscription the store serves on every commit (on the
writer's path) and decode and encode the same change once per watcher. Here one task follows the
store; ``read`` turns each event into ``(kind, revision, payload)`` once (the API makes the payload
the finished SSE bytes), and appends it to one shared log. Watchers keep a cursor into the log and
are woken once per batch of events (at most BATCH events), not once per event; the broadcast gives
the loop back between batches, so requests run between them.

A watcher holds nothing of its own: the log is trimmed to what the slowest live watcher still has to
read. A watcher whose client stops reading (its stream is blocked writing) while ``buffer_events``
or more changes wait for it is dropped: it gets a ``Dropped`` notice once its write completes, and
the log no longer waits for it. A store failure ends every watcher with ``FeedFailed``; the next
watcher starts a new broadcast.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import deque
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.requests.event_feed import FeedFailed, FeedNotice, next_revision
from loadmaster.store.interface import Event, StoreError

T = TypeVar("T")
# Events appended between two wake-ups of the watchers (and two yields to the loop).
BATCH = 256
# Watchers woken at a time: each writes to its client (~50-80 us in Python), so a request waits for at
# most this many writes, not for every watcher's.
WAKE_SLICE = 32
Item = tuple[str, int, T]  # (kind, revision, payload)


@dataclass(frozen=True, slots=True)
class Dropped(FeedNotice):
    """The client read too slowly; the stream ends here."""

    message: str


class Watcher(Generic[T]):
    """One live watcher: a cursor into the broadcast's log, from revision ``start`` on."""

    __slots__ = ("cursor", "ending", "kinds", "start", "wake", "writing")

    def __init__(self, kinds: frozenset[str], cursor: int) -> None:
        self.kinds = kinds
        self.cursor = cursor  # sequence number of the next log item to read
        self.start = 0  # items older than this revision are not for this watcher
        self.wake = asyncio.Event()
        self.writing = False  # its client is being written to (the stream is waiting on it)
        self.ending: FeedFailed | Dropped | None = None


class WatchBroadcast(Generic[T]):
    def __init__(
        self,
        plane: ControlPlane,
        prefix: str,
        read: Callable[[Event], Item[T] | None],
        buffer_events: int,
    ) -> None:
        self._plane = plane
        self._prefix = prefix
        self._read = read
        self._buffer_events = buffer_events
        self._log: deque[Item[T]] = deque()
        self._first_seq = 0  # sequence number of self._log[0]
        self._watchers: dict[Watcher[T], None] = {}
        self._running: asyncio.Task[None] | None = None
        self._opened: asyncio.Future[None] | None = None

    @property
    def watchers(self) -> int:
        return len(self._watchers)

    async def feed(
        self, kinds: frozenset[str], idle_s: float
    ) -> AsyncGenerator[list[T | FeedFailed | Dropped]]:
        """Every change to ``kinds`` from now on, in batches; an empty batch after ``idle_s`` of quiet."""
        await self._open()
        watcher = Watcher[T](kinds, self._first_seq + len(self._log))
        self._watchers[watcher] = None
        try:
            watcher.start = await next_revision(self._plane)  # "now": after the watcher was registered
        except BaseException:
            self._leave(watcher)
            raise
        return self._follow(watcher, idle_s)

    async def _open(self) -> None:
        """Start following the store (once): from the revision after the current one."""
        if self._opened is None or (self._running is not None and self._running.done()):
            self._opened = asyncio.get_running_loop().create_future()
            self._running = asyncio.create_task(self._run(self._opened), name="watch-broadcast")
        await asyncio.shield(self._opened)

    async def _follow(
        self, watcher: Watcher[T], idle_s: float
    ) -> AsyncGenerator[list[T | FeedFailed | Dropped]]:
        closing = asyncio.create_task(self._plane.closing.wait())
        woken: asyncio.Task[bool] | None = None
        try:
            while True:
                woken = asyncio.create_task(watcher.wake.wait())
                done, _ = await asyncio.wait(
                    {woken, closing}, timeout=idle_s, return_when=asyncio.FIRST_COMPLETED
                )
                if woken not in done:
                    woken.cancel()
                    if closing in done:
                        return
                    watcher.writing = True
                    yield []
                    watcher.writing = False
                    continue
                watcher.wake.clear()
                batch = self._unread(watcher)
                if watcher.ending is not None:
                    yield [*batch, watcher.ending]
                    return
                if batch:
                    watcher.writing = True
                    yield batch
                    watcher.writing = False
                if watcher.ending is not None:  # dropped while its client was being written to
                    yield [watcher.ending]
                    return
        finally:
            closing.cancel()
            if woken is not None:
                woken.cancel()
            self._leave(watcher)

    def _unread(self, watcher: Watcher[T]) -> list[T | FeedFailed | Dropped]:
        """What the log holds for ``watcher`` past its cursor; the cursor moves to the end."""
        offset = max(0, watcher.cursor - self._first_seq)
        kinds, start = watcher.kinds, watcher.start
        unread: list[T | FeedFailed | Dropped] = [
            payload
            for kind, revision, payload in itertools.islice(self._log, offset, None)
            if revision >= start and kind in kinds
        ]
        watcher.cursor = self._first_seq + len(self._log)
        return unread

    def _leave(self, watcher: Watcher[T]) -> None:
        self._watchers.pop(watcher, None)
        if not self._watchers:
            self._first_seq += len(self._log)
            self._log.clear()

    async def _run(self, opened: asyncio.Future[None]) -> None:
        queue: asyncio.Queue[Event | Exception] = asyncio.Queue()
        try:
            start = await next_revision(self._plane)
        except StoreError as error:
            opened.set_exception(error)
            return
        opened.set_result(None)
        pump = asyncio.create_task(self._pump(start, queue))
        try:
            while True:
                first = await queue.get()
                items = [first]
                while len(items) < BATCH and not queue.empty():
                    items.append(queue.get_nowait())
                for item in items:
                    if isinstance(item, Exception):
                        self._end_all(FeedFailed(str(item)))
                        return
                    told = self._read(item)
                    if told is not None:
                        self._log.append(told)
                await self._publish()
        finally:
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump

    async def _pump(self, start: int, queue: asyncio.Queue[Event | Exception]) -> None:
        try:
            async for event in self._plane.store.watch(self._prefix, start):
                queue.put_nowait(event)
        except (StoreError, ValueError) as error:
            queue.put_nowait(error)

    async def _publish(self) -> None:
        """Wake every watcher, a slice at a time (the loop serves requests between slices); drop the
        ones stuck on a slow client; trim what all have read."""
        end = self._first_seq + len(self._log)
        for number, watcher in enumerate(list(self._watchers), start=1):
            if watcher.writing and end - watcher.cursor >= self._buffer_events:
                watcher.ending = Dropped(
                    f"this watch fell {end - watcher.cursor} changes behind (the limit is "
                    f"{self._buffer_events}): read faster, or watch fewer kinds; list and watch again"
                )
                self._watchers.pop(watcher, None)
            watcher.wake.set()
            if number % WAKE_SLICE == 0:
                await asyncio.sleep(0)
        await asyncio.sleep(0)
        oldest = min((watcher.cursor for watcher in self._watchers), default=end)
        for _ in range(max(0, oldest - self._first_seq)):
            self._log.popleft()
        self._first_seq = max(self._first_seq, oldest)

    def _end_all(self, notice: FeedFailed) -> None:
        for watcher in self._watchers:
            watcher.ending = notice
            watcher.wake.set()
        self._watchers.clear()
        self._first_seq += len(self._log)
        self._log.clear()
