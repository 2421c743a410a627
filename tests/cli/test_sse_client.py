"""The clients read the server's event streams with httpx-sse (the agent's watch, ``get -w``, ``audit
-f``): whatever the server writes (``api/sse.py``: ``event:``/``data:`` blocks, comment keep-alives,
written in chunks cut anywhere), the library hands back the same events with the same JSON."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
from httpx_sse import EventSource
from hypothesis import given
from hypothesis import strategies as st

from loadmaster.api.sse import sse_block

EVENT_NAMES = st.sampled_from(["put", "delete", "relist", "error", "audit"])
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),  # text with newlines, colons, "data:" ...
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
KEEPALIVE = b": keepalive\n\n"


class Chunks(httpx.SyncByteStream):
    """The body as the network hands it over: in pieces cut anywhere (mid-line, mid-character)."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks


def _stream(chunks: list[bytes]) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Chunks(chunks))


@given(
    st.lists(st.tuples(EVENT_NAMES, JSON_VALUES, st.booleans()), max_size=6),
    st.lists(st.integers(1, 50), max_size=5),
)
def test_every_event_the_server_writes_is_read_back_with_its_json(
    written: list[tuple[str, Any, bool]], cuts: list[int]
) -> None:
    body = b": stream open\n\n" + b"".join(
        sse_block(name, data) + (KEEPALIVE if keepalive else b"") for name, data, keepalive in written
    )
    chunks, start = [], 0
    for cut in sorted({min(c, len(body)) for c in cuts}):
        chunks.append(body[start:cut])
        start = cut
    chunks.append(body[start:])
    read = [(event.event, event.json()) for event in EventSource(_stream(chunks)).iter_sse()]
    assert read == [(name, data) for name, data, _ in written]
