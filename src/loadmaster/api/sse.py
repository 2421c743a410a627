"""Server-sent events from a store watch: ``event: <type>`` / ``data: <json>`` blocks, keep-alive
comments while nothing happens, and an end when the server shuts down.

The store's watch runs in its own task and hands events over through a bounded queue, so a slow client
slows only its own stream. A compacted start revision becomes an ``event: relist`` (with the current
revision) followed by the stream from there, as docs/api.md says.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from loadmaster.api.responses import json_bytes
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.store.interface import CompactedError, Event, StoreError

KEEPALIVE_S = 15.0
_QUEUE_SIZE = 1_000
_BATCH = 64


def sse_block(event: str, data: Any) -> bytes:
    return b"event: " + event.encode() + b"\ndata: " + json_bytes(data) + b"\n\n"


async def _pump(
    plane: ControlPlane, prefix: str, start: int, queue: asyncio.Queue[Event | Exception]
) -> None:
    try:
        async for event in plane.store.watch(prefix, start):
            await queue.put(event)
    except (StoreError, ValueError) as error:
        await queue.put(error)


def _ready(first: Event | Exception, queue: asyncio.Queue[Event | Exception]) -> Iterator[Event | Exception]:
    """``first`` and what else is already queued (at most ``_BATCH``): a burst of events goes out as one
    write, not one task, timer and send per event."""
    yield first
    for _ in range(_BATCH - 1):
        if queue.empty():
            return
        yield queue.get_nowait()


async def watch_stream(
    plane: ControlPlane, prefix: str, start: int, render: Callable[[Event], bytes | None]
) -> AsyncIterator[bytes]:
    """SSE bytes for every event under ``prefix`` from revision ``start`` (``render`` may skip one)."""
    queue: asyncio.Queue[Event | Exception] = asyncio.Queue(maxsize=_QUEUE_SIZE)
    pump = asyncio.create_task(_pump(plane, prefix, start, queue))
    closing = asyncio.create_task(plane.closing.wait())
    try:
        yield b": stream open\n\n"
        while True:
            getter = asyncio.create_task(queue.get())
            done, _ = await asyncio.wait(
                {getter, closing}, timeout=KEEPALIVE_S, return_when=asyncio.FIRST_COMPLETED
            )
            if getter not in done:
                getter.cancel()
                if closing in done:
                    return
                yield b": keepalive\n\n"
                continue
            blocks: list[bytes] = []
            for item in _ready(getter.result(), queue):
                if isinstance(item, CompactedError):
                    current = await plane.store.revision()
                    blocks.append(sse_block("relist", {"revision": current, "message": str(item)}))
                    pump = asyncio.create_task(_pump(plane, prefix, current + 1, queue))
                elif isinstance(item, Exception):
                    error = sse_block("error", {"error": "unavailable", "message": str(item)})
                    yield b"".join([*blocks, error])
                    return
                elif (block := render(item)) is not None:
                    blocks.append(block)
            if blocks:
                yield b"".join(blocks)
    finally:
        for task in (pump, closing):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(pump, closing, return_exceptions=True)
