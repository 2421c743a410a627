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
from loadmaster.api.sse import sse_block, watch_stream
from loadmaster.manifests import KINDS, ManifestError, normalize_kind
from loadmaster.runtime.plane.store_layout import OBJECTS, decode_object, parse_object_key
from loadmaster.store.interface import Event

router = APIRouter(tags=["watch"])
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


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


@router.get("/api/watch")
async def watch(
    request: Request,
    _: Annotated[Principal, Depends(require(USERS))],
    kinds: Annotated[
        str | None, Query(description="comma-separated kinds, e.g. replicas,nodes (default: all)")
    ] = None,
    from_revision: Annotated[int, Query(ge=0, description="replay from this revision; 0 = from now")] = 0,
) -> StreamingResponse:
    plane = plane_of(request)
    wanted = parse_kinds(kinds)
    start = from_revision or await plane.store.revision() + 1

    def render(event: Event) -> bytes | None:
        parsed = parse_object_key(event.key)
        if parsed is None or parsed[0] not in wanted:
            return None
        kind, name = parsed
        obj = decode_object(event.value, event.revision) if event.value is not None else None
        return sse_block(event.kind, {"kind": kind, "name": name, "revision": event.revision, "object": obj})

    stream = watch_stream(plane, OBJECTS, start, render)
    return StreamingResponse(stream, media_type="text/event-stream", headers=SSE_HEADERS)
