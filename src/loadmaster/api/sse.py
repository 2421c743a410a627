"""Server-sent events: ``event: <type>`` / ``data: <json>`` blocks, keep-alive comments while nothing
happens, and an end when the server shuts down.

What the events say comes from a runtime feed (``runtime/requests/reads/event_feed.py``): batches of
changes, a ``Relist`` when the start revision is gone (``event: relist`` with the current revision,
as docs/api.md says), a ``FeedFailed`` when the store fails (``event: error``, and the stream ends),
a ``Dropped`` when the client read too slowly (``event: error`` with ``too_slow``, and the stream ends;
only the live watch, ``watch_stream.py``, is dropped).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable
from contextlib import aclosing
from typing import Any, TypeVar

from loadmaster.api.responses import json_bytes
from loadmaster.runtime.requests.reads.event_feed import FeedFailed, FeedNotice, Relist
from loadmaster.runtime.requests.reads.watch_broadcast import Dropped

T = TypeVar("T")
KEEPALIVE_S = 15.0
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
# The OpenAPI description of a stream's answer.
SSE_RESPONSE_DOC: dict[int | str, dict[str, object]] = {
    200: {
        "description": "server-sent events (``event: <type>`` / ``data: <json>`` blocks)",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
}


def sse_block(event: str, data: Any) -> bytes:
    return b"event: " + event.encode() + b"\ndata: " + json_bytes(data) + b"\n\n"


def notice_block(notice: Relist | FeedFailed | Dropped) -> bytes:
    if isinstance(notice, Relist):
        return sse_block("relist", {"revision": notice.revision, "message": notice.message})
    if isinstance(notice, Dropped):
        return sse_block("error", {"error": "too_slow", "message": notice.message})
    return sse_block("error", {"error": "unavailable", "message": notice.message})


def _block(item: T | Relist | FeedFailed, render: Callable[[T], bytes]) -> bytes:
    if not isinstance(item, FeedNotice):  # one check for the common case: a change
        return render(item)
    assert isinstance(item, Relist | FeedFailed)  # the notices a feed sends
    return notice_block(item)


async def sse_stream(
    feed: AsyncGenerator[list[T | Relist | FeedFailed]],
    render: Callable[[T], bytes],
    first: Iterable[T] = (),
) -> AsyncIterator[bytes]:
    """SSE bytes: ``first`` (what was listed before the feed starts), then each batch as one write.
    The feed is closed (its store watch stopped) however the stream ends, a client gone included."""
    async with aclosing(feed):
        yield b": stream open\n\n"
        for item in first:
            yield render(item)
        async for batch in feed:
            yield b"".join(_block(item, render) for item in batch) if batch else b": keepalive\n\n"
