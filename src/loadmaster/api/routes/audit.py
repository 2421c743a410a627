"""``GET /api/audit``: the audit log, filtered by type and sequence number, or followed live (SSE).

``since=N`` returns entries with ``seq > N`` (pass the last seq you saw); ``type=a,b`` keeps only
those types. ``follow=true`` sends the matching entries, then every new one, as ``event: audit``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import StreamingResponse

from loadmaster.api.auth import USERS, Principal, plane_of, require
from loadmaster.api.responses import FastJSONResponse
from loadmaster.api.routes.watch import SSE_HEADERS
from loadmaster.api.sse import sse_block, watch_stream
from loadmaster.runtime.plane.audit import audit_record
from loadmaster.runtime.plane.store_layout import AUDIT
from loadmaster.store.interface import Event

router = APIRouter(tags=["audit"])


@router.get("/api/audit", response_model=None)
async def audit(
    request: Request,
    _: Annotated[Principal, Depends(require(USERS))],
    type: Annotated[str | None, Query(description="comma-separated entry types")] = None,
    since: Annotated[int, Query(ge=0, description="only entries with seq > since")] = 0,
    follow: Annotated[bool, Query(description="stream new entries as server-sent events")] = False,
) -> Any:
    plane = plane_of(request)
    types = {t.strip() for t in type.split(",") if t.strip()} if type else None

    def wanted(entry: dict[str, Any]) -> bool:
        return entry["seq"] > since and (types is None or entry["type"] in types)

    entries, revision = await plane.store.list(AUDIT)
    items = [record for entry in entries if wanted(record := audit_record(entry.value))]
    if not follow:
        return FastJSONResponse({"items": items, "revision": revision})

    def render(event: Event) -> bytes | None:
        if event.value is None:
            return None
        record = audit_record(event.value)
        return sse_block("audit", record) if wanted(record) else None

    async def stream() -> Any:
        for record in items:
            yield sse_block("audit", record)
        async for block in watch_stream(plane, AUDIT, revision + 1, render):
            yield block

    return StreamingResponse(stream(), media_type="text/event-stream", headers=SSE_HEADERS)
