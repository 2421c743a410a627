"""``GET /api/audit``: the audit log, filtered by type and sequence number, or followed live (SSE).

``since=N`` returns entries with ``seq > N`` (pass the last seq you saw); ``type=a,b`` keeps only
those types. ``follow=true`` sends the matching entries, then every new one, as ``event: audit``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from loadmaster.api.auth import USERS, Principal, plane_of, require
from loadmaster.api.body_admission import bearer_token
from loadmaster.api.response_schemas import Items
from loadmaster.api.responses import FastJSONResponse
from loadmaster.api.sse import KEEPALIVE_S, SSE_HEADERS, sse_block, sse_stream
from loadmaster.api.stream_slots import HeldStream, StreamSlots
from loadmaster.runtime.requests.reads.audit_reads import AuditQuery, audit_entries, audit_feed

router = APIRouter(tags=["audit"])


def render(record: dict[str, Any]) -> bytes:
    return sse_block("audit", record)


@router.get(
    "/api/audit",
    response_model=Items,
    responses={200: {"content": {"text/event-stream": {"schema": {"type": "string"}}}}},
    description="The audit entries as JSON, or with ``follow`` as server-sent events (``event: audit``).",
)
async def audit(
    request: Request,
    _: Annotated[Principal, Depends(require(USERS))],
    type: Annotated[str | None, Query(description="comma-separated entry types")] = None,
    since: Annotated[int, Query(ge=0, description="only entries with seq > since")] = 0,
    follow: Annotated[bool, Query(description="stream new entries as server-sent events")] = False,
) -> Any:
    plane = plane_of(request)
    types = frozenset(t.strip() for t in type.split(",") if t.strip()) if type else None
    query = AuditQuery(since, types)
    items, revision = await audit_entries(plane, query)
    if not follow:
        return FastJSONResponse({"items": items, "revision": revision})
    slots: StreamSlots = request.app.state.stream_slots
    give_back = slots.take(bearer_token(request.scope) or "")
    try:
        feed = audit_feed(plane, query, revision, KEEPALIVE_S)
    except BaseException:
        give_back()
        raise
    stream = sse_stream(feed, render, first=items)
    return HeldStream(stream, give_back, media_type="text/event-stream", headers=SSE_HEADERS)
