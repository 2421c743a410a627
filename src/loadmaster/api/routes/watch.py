"""``GET /api/watch``: every change to the chosen kinds, as server-sent events.

``from_revision=N`` replays every change with revision >= N, then streams live ones; 0 (the default)
means "from now on". Each event is ``event: put`` or ``event: delete`` with ``data: {kind, name,
revision, object}`` (``object`` is null for deletes). A revision the store no longer keeps gives
``event: relist`` (with the current revision: list again, then expect events after it).

A watch from now on joins the server's one watch broadcast (``runtime/requests/reads/watch_broadcast.py``):
each change is decoded and rendered once for every such watcher, and written straight to its
connection (``api/watch_stream.py``). A replay follows the store itself.
Every stream takes a slot first (``api/stream_slots.py``: 429 past the caps); a client that reads too
slowly gets ``event: error`` (``too_slow``) and the stream ends.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request

from loadmaster.api.auth import USERS, Principal, plane_of, require
from loadmaster.api.body_admission import bearer_token
from loadmaster.api.errors import ApiError
from loadmaster.api.sse import KEEPALIVE_S, SSE_HEADERS, SSE_RESPONSE_DOC, sse_block, sse_stream
from loadmaster.api.stream_slots import HeldStream, StreamSlots
from loadmaster.api.watch_stream import ConnectionSink, WatchStream
from loadmaster.manifests import KINDS, ManifestError, normalize_kind
from loadmaster.runtime.plane.storage.store_layout import OBJECTS
from loadmaster.runtime.requests.reads.object_reads import ObjectChange, broadcast_items, object_feed
from loadmaster.runtime.requests.reads.watch_broadcast import WatchBroadcast

router = APIRouter(tags=["watch"])
ALL_KINDS = frozenset(KINDS)


def parse_kinds(text: str | None) -> frozenset[str]:
    if not text:
        return ALL_KINDS
    kinds = set()
    for part in text.split(","):
        try:
            kinds.add(normalize_kind(part))
        except ManifestError as error:
            raise ApiError(400, "invalid", f"kinds: {error.message}") from None
    return frozenset(kinds)


def render(change: ObjectChange) -> bytes:
    event, data = change
    return sse_block(event, data)


def object_broadcast(request: Request, buffer_events: int) -> WatchBroadcast:
    """The app's broadcast of object changes (made on first use: it belongs to the running loop)."""
    state = request.app.state
    if getattr(state, "object_broadcast", None) is None:
        items = broadcast_items(ALL_KINDS, render)  # each change rendered once, for every watcher
        state.object_broadcast = WatchBroadcast(plane_of(request), OBJECTS, items, buffer_events, KEEPALIVE_S)
    broadcast: WatchBroadcast = state.object_broadcast
    return broadcast


def stream_slots(request: Request) -> StreamSlots:
    slots: StreamSlots = request.app.state.stream_slots
    return slots


@router.get("/api/watch", response_model=None, responses=SSE_RESPONSE_DOC)
async def watch(
    request: Request,
    _: Annotated[Principal, Depends(require(USERS))],
    kinds: Annotated[
        str | None, Query(description="comma-separated kinds, e.g. replicas,nodes (default: all)")
    ] = None,
    from_revision: Annotated[int, Query(ge=0, description="replay from this revision; 0 = from now")] = 0,
) -> HeldStream | WatchStream:
    chosen = parse_kinds(kinds)
    give_back = stream_slots(request).take(bearer_token(request.scope) or "")
    try:
        if from_revision:
            replay = await object_feed(plane_of(request), chosen, from_revision, KEEPALIVE_S)
            return HeldStream(sse_stream(replay, render), give_back, "text/event-stream", SSE_HEADERS)
        broadcast = object_broadcast(request, request.app.state.http_limits.watch_buffer_events)
        sink = ConnectionSink()
        return WatchStream(await broadcast.join(chosen, sink), sink, give_back, SSE_HEADERS)
    except BaseException:
        give_back()
        raise
