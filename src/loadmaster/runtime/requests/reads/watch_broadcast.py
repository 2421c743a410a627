"""One store watch shared by every live watcher, so a write costs about the same with 1 or 1,000 open.

Each watcher of its own would be one more subscription the store serves on every commit and decode
and encode the same change once per watcher. Here one task follows the store; ``read`` turns each
event into ``(kind, revision, payload)`` once (the API makes the payload the finished SSE bytes), and
appends it to one shared log. A watcher is a cursor into that log and a ``WatchSink``: where its
bytes go (the API's writes them straight to the client's connection). After each batch of events
(at most one batch per PUBLISH_INTERVAL_S: the changes of busy times go out together) the broadcast
writes to every watcher, in one pass, what it has not had yet; watchers with the same
kinds at the same cursor share one joined ``bytes`` (what 1,000 watchers cost is then 1,000 socket
writes, ~5 us each, not 1,000 encodings, tasks and ASGI messages). No task runs per watcher.

A watcher whose client has not yet taken its last write (``unsent_bytes() > 0``) is written nothing
more; its sink says when it drained (``Watcher.drained``) and it gets everything it missed at once.
If ``buffer_events`` or more changes wait for such a watcher it is dropped: it is told ``Dropped``
after what it was already sent, and the log no longer waits for it. The log is trimmed to what the
slowest live watcher still has to read. A watcher written nothing for ``idle_s / 2`` to ``idle_s``
gets a keep-alive, and one each ``idle_s`` while nothing happens. A store failure ends every watcher
with ``FeedFailed``, the server closing with no notice; the next watcher starts a new broadcast.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.requests.reads.event_feed import FeedFailed, FeedNotice, next_revision
from loadmaster.store.interface import Event, StoreError

# Events appended to the log between two passes over the watchers (at most 20,000 a second flow through).
BATCH = 2048
# Watchers written in one go before the loop is given back: ~5 us a write, so a request waits at most
# ~1 ms behind a pass, however many watchers there are.
WRITE_SLICE = 32
# At most one pass over the watchers this often. A pass is a socket write per watcher (1,000 watchers:
# ~15 ms of the server's CPU); back to back, passes took 4 ms of CPU per apply with 1,000 streams open
# and held up requests between their slices (issue 12, bench/abuse.py: apply p99 24 ms). One pass per
# 100 ms bounds that to ~15% of a core, whatever the write rate: the changes arriving meanwhile go out
# together, one write per watcher (apply CPU 1.0 ms, p99 8-16 ms). A change after a quiet spell goes out
# at once; a watcher sees a change at most this late.
PUBLISH_INTERVAL_S = 0.1
Item = tuple[str, int, bytes]  # (kind, revision, payload)


@dataclass(frozen=True, slots=True)
class Dropped(FeedNotice):
    """The client read too slowly; the stream ends here."""

    message: str


class WatchSink(Protocol):
    """Where one watcher's bytes go. ``write`` must not block: what the client has not taken yet is
    ``unsent_bytes``, and the sink calls ``Watcher.drained`` once that is 0 again."""

    def unsent_bytes(self) -> int: ...

    def write(self, data: bytes) -> None: ...

    def keep_alive(self) -> None: ...

    def end(self, notice: FeedFailed | Dropped | None) -> None:
        """The watch is over: say ``notice`` (None: the server is closing) after what was written."""


class Watcher:
    """One live watcher: a cursor into the broadcast's log, from revision ``start`` on."""

    __slots__ = ("_broadcast", "cursor", "kinds", "quiet", "sink", "start")

    def __init__(
        self, broadcast: WatchBroadcast, kinds: frozenset[str], sink: WatchSink, cursor: int
    ) -> None:
        self._broadcast = broadcast
        self.kinds = kinds
        self.sink = sink
        self.cursor = cursor  # sequence number of the next log item to read
        # Items older than this revision are not for this watcher; 0 once every later item is newer.
        self.start = 0
        self.quiet = False  # written nothing since the last keep-alive tick

    def drained(self) -> None:
        """Its client took everything written to it: write what it missed meanwhile."""
        if self in self._broadcast._watchers:
            self._broadcast._deliver(self, self._broadcast._end, {})

    def leave(self) -> None:
        """Its client is gone (or its stream ended): forget it."""
        self._broadcast._leave(self)


class WatchBroadcast:
    def __init__(
        self,
        plane: ControlPlane,
        prefix: str,
        read: Callable[[Event], Item | None],
        buffer_events: int,
        idle_s: float,
        publish_interval_s: float = PUBLISH_INTERVAL_S,
    ) -> None:
        self._plane = plane
        self._publish_interval_s = publish_interval_s
        self._prefix = prefix
        self._read = read
        self._buffer_events = buffer_events
        self._idle_s = idle_s
        self._log: deque[Item] = deque()
        self._first_seq = 0  # sequence number of self._log[0]
        self._watchers: dict[Watcher, None] = {}
        self._running: asyncio.Task[None] | None = None
        self._opened: asyncio.Future[None] | None = None

    @property
    def watchers(self) -> int:
        return len(self._watchers)

    @property
    def _end(self) -> int:
        return self._first_seq + len(self._log)

    async def join(self, kinds: frozenset[str], sink: WatchSink) -> Watcher:
        """A watcher of every change to ``kinds`` from now on, written to ``sink``."""
        await self._open()
        watcher = Watcher(self, kinds, sink, self._end)
        watcher.start = 1 << 62  # nothing is written before "now" is known
        self._watchers[watcher] = None
        try:
            watcher.start = await next_revision(self._plane)  # "now": after the watcher was registered
        except BaseException:
            self._leave(watcher)
            raise
        if watcher in self._watchers:  # else the broadcast ended meanwhile, and told its sink
            self._deliver(watcher, self._end, {})
        return watcher

    async def _open(self) -> None:
        """Start following the store (once): from the revision after the current one."""
        if self._opened is None or (self._running is not None and self._running.done()):
            self._opened = asyncio.get_running_loop().create_future()
            self._running = asyncio.create_task(self._run(self._opened), name="watch-broadcast")
        await asyncio.shield(self._opened)

    def _deliver(self, watcher: Watcher, end: int, shared: dict[tuple[int, frozenset[str]], bytes]) -> None:
        """Write what ``watcher`` has not had of the log up to ``end`` (if its client took the last
        write); ``shared`` holds the bytes already joined for other watchers at the same cursor."""
        if watcher.cursor >= end or watcher.sink.unsent_bytes():
            return
        if watcher.start:
            data = self._joined(watcher.cursor, watcher.kinds, watcher.start)
            if self._log and self._log[-1][1] >= watcher.start:
                watcher.start = 0  # every later item is newer: share from now on
        else:
            key = (watcher.cursor, watcher.kinds)
            joined = shared.get(key)
            if joined is None:
                joined = shared[key] = self._joined(watcher.cursor, watcher.kinds, 0)
            data = joined
        watcher.cursor = end
        if data:
            watcher.quiet = False
            watcher.sink.write(data)

    def _joined(self, cursor: int, kinds: frozenset[str], start: int) -> bytes:
        return b"".join(
            payload
            for kind, revision, payload in itertools.islice(self._log, cursor - self._first_seq, None)
            if revision >= start and kind in kinds
        )

    def _leave(self, watcher: Watcher) -> None:
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
        ticking = asyncio.create_task(self._tick())
        closing = asyncio.create_task(self._plane.closing.wait())
        loop = asyncio.get_running_loop()
        interval_s = self._publish_interval_s
        published_at = loop.time() - interval_s
        try:
            while True:
                getting = asyncio.create_task(queue.get())
                await asyncio.wait({getting, closing}, return_when=asyncio.FIRST_COMPLETED)
                if closing.done():
                    getting.cancel()
                    self._end_all(None)
                    return
                wait_s = published_at + interval_s - loop.time()
                if wait_s > 0:  # the last pass was just now: gather what else comes meanwhile
                    # The event loop's time, not the plane clock, on purpose (as the keep-alive tick):
                    # this paces writes to live sockets, and a virtual clock would hold their bytes.
                    await asyncio.sleep(wait_s)
                items = [getting.result()]
                while len(items) < BATCH and not queue.empty():
                    items.append(queue.get_nowait())
                for item in items:
                    if isinstance(item, Exception):
                        self._end_all(FeedFailed(str(item)))
                        return
                    told = self._read(item)
                    if told is not None:
                        self._log.append(told)
                published_at = loop.time()
                await self._publish()
        finally:
            for task in (pump, ticking, closing):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(pump, ticking, closing, return_exceptions=True)

    async def _pump(self, start: int, queue: asyncio.Queue[Event | Exception]) -> None:
        try:
            async for event in self._plane.store.watch(self._prefix, start):
                queue.put_nowait(event)
        except (StoreError, ValueError) as error:
            queue.put_nowait(error)

    async def _publish(self) -> None:
        """Write the new items to every watcher, a slice at a time (the loop serves requests between
        slices); drop the ones stuck on a slow client; trim what all have read."""
        end = self._end
        shared: dict[tuple[int, frozenset[str]], bytes] = {}
        for number, watcher in enumerate(list(self._watchers), start=1):
            if watcher not in self._watchers:  # left while the loop was given back
                continue
            if watcher.sink.unsent_bytes() and end - watcher.cursor >= self._buffer_events:
                self._drop(watcher, end)
            else:
                self._deliver(watcher, end, shared)
            if number % WRITE_SLICE == 0:
                await asyncio.sleep(0)
        oldest = min((watcher.cursor for watcher in self._watchers), default=self._end)
        for _ in range(max(0, oldest - self._first_seq)):
            self._log.popleft()
        self._first_seq = max(self._first_seq, oldest)

    def _drop(self, watcher: Watcher, end: int) -> None:
        self._watchers.pop(watcher, None)
        watcher.sink.end(
            Dropped(
                f"this watch fell {end - watcher.cursor} changes behind (the limit is "
                f"{self._buffer_events}): read faster, or watch fewer kinds; list and watch again"
            )
        )

    async def _tick(self) -> None:
        """Keep-alives: a watcher written nothing during a whole tick gets one at the next."""
        while True:
            await asyncio.sleep(self._idle_s / 2)
            for watcher in list(self._watchers):
                if watcher.quiet and not watcher.sink.unsent_bytes():
                    watcher.sink.keep_alive()
                    watcher.quiet = False  # the next one a whole idle_s later, if still quiet
                else:
                    watcher.quiet = True

    def _end_all(self, notice: FeedFailed | None) -> None:
        watchers, self._watchers = list(self._watchers), {}
        self._first_seq += len(self._log)
        self._log.clear()
        for watcher in watchers:
            watcher.sink.end(notice)
