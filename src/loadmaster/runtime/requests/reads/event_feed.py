"""Following the store for one client: what changed under a prefix, in batches, until the server closes.

The store's watch runs in its own task and hands events over through a bounded queue, so a slow client
slows only its own feed. ``read`` turns an event into what the client is told (None: not for it). A
start revision the store no longer keeps becomes a ``Relist`` (with the current revision), and the
feed goes on from there; a store failure ends the feed with a ``FeedFailed``. An empty batch means
nothing happened for ``idle_s`` (the API sends a keep-alive then).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.store.interface import CompactedError, Event, StoreError

T = TypeVar("T")
_QUEUE_SIZE = 1_000
# At most this many queued events make one batch: a burst goes out as one write, not one per event.
_BATCH = 64


class FeedNotice:
    """Something the feed says about itself rather than about the store's contents."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Relist(FeedNotice):
    """History before ``revision`` is gone: list again, then expect changes after ``revision``."""

    revision: int
    message: str


@dataclass(frozen=True, slots=True)
class FeedFailed(FeedNotice):
    """The store failed; the feed ends here."""

    message: str


async def _pump(
    plane: ControlPlane, prefix: str, start: int, queue: asyncio.Queue[Event | Exception]
) -> None:
    try:
        async for event in plane.store.watch(prefix, start):
            await queue.put(event)
    except (StoreError, ValueError) as error:
        await queue.put(error)


def _ready(first: Event | Exception, queue: asyncio.Queue[Event | Exception]) -> Iterator[Event | Exception]:
    """``first`` and what else is already queued (at most ``_BATCH``)."""
    yield first
    for _ in range(_BATCH - 1):
        if queue.empty():
            return
        yield queue.get_nowait()


async def follow(
    plane: ControlPlane, prefix: str, start: int, read: Callable[[Event], T | None], idle_s: float
) -> AsyncGenerator[list[T | Relist | FeedFailed]]:
    """Batches of what ``read`` makes of every event under ``prefix`` from revision ``start``."""
    queue: asyncio.Queue[Event | Exception] = asyncio.Queue(maxsize=_QUEUE_SIZE)
    pump = asyncio.create_task(_pump(plane, prefix, start, queue))
    closing = asyncio.create_task(plane.closing.wait())
    try:
        while True:
            getter = asyncio.create_task(queue.get())
            done, _ = await asyncio.wait(
                {getter, closing}, timeout=idle_s, return_when=asyncio.FIRST_COMPLETED
            )
            if getter not in done:
                getter.cancel()
                if closing in done:
                    return
                yield []
                continue
            batch: list[T | Relist | FeedFailed] = []
            for item in _ready(getter.result(), queue):
                if isinstance(item, CompactedError):
                    current = await plane.store.revision()
                    batch.append(Relist(current, str(item)))
                    pump = asyncio.create_task(_pump(plane, prefix, current + 1, queue))
                elif isinstance(item, Exception):
                    yield [*batch, FeedFailed(str(item))]
                    return
                elif (told := read(item)) is not None:
                    batch.append(told)
            if batch:
                yield batch
    finally:
        for task in (pump, closing):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(pump, closing, return_exceptions=True)


async def next_revision(plane: ControlPlane) -> int:
    """The first revision a feed started now would see ("from now on")."""
    return await plane.store.revision() + 1
