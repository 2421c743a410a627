"""``GET /api/watch``: every change to the chosen kinds, as server-sent events.

``from_revision=N`` replays every change with revision >= N, then streams live ones; 0 (the default)
means "from now on". Each event is ``event: put`` or ``event: delete`` with ``data: {kind, name,
revision, object}`` (``object`` is null for deletes). A revision the store no longer keeps gives
``event: relist`` (with the current revision: list again, then expect events after it).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import StreamingResponse

from loadmaster.api.auth import USERS, Principal, plane_of, require
from loadmaster.api.errors import ApiError
from loadmaster.api.sse import KEEPALIVE_S, SSE_HEADERS, sse_block, sse_stream
from loadmaster.manifests import KINDS, ManifestError, normalize_kind
from loadmaster.runtime.requests.object_reads import ObjectChange, object_feed

router = APIRouter(tags=["watch"])


def parse_kinds(text: str | None) -> frozenset[str]:
    if not text:
        return frozenset(KINDS)
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


@router.get("/api/watch")
async def watch(
    request: Request,
    _: Annotated[Principal, Depends(require(USERS))],
    kinds: Annotated[
        str | None, Query(description="comma-separated kinds, e.g. replicas,nodes (default: all)")
    ] = None,
    from_revision: Annotated[int, Query(ge=0, description="replay from this revision; 0 = from now")] = 0,
) -> StreamingResponse:
    feed = await object_feed(plane_of(request), parse_kinds(kinds), from_revision, KEEPALIVE_S)
    return StreamingResponse(sse_stream(feed, render), media_type="text/event-stream", headers=SSE_HEADERS)
