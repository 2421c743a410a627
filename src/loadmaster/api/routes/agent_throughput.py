"""``/api/agent/throughput``: what an agent measures its network to the server against (advisory, B4).

``GET ?bytes=N`` sends N bytes (the agent times the download); ``POST`` reads the body and says how many
bytes arrived (the agent times the upload). Sizes are bounded so a measurement stays cheap.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import StreamingResponse

from loadmaster.api.auth import AGENTS, Principal, require
from loadmaster.api.response_schemas import Record
from loadmaster.api.responses import FastJSONResponse

router = APIRouter(tags=["nodes"])
MAX_DOWNLOAD_BYTES = 64 * 1024 * 1024
_CHUNK = b"\0" * (64 * 1024)


@router.get(
    "/api/agent/throughput",
    response_model=None,
    responses={
        200: {"content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}
    },
)
async def download(
    _: Annotated[Principal, Depends(require(AGENTS))],
    size: Annotated[int, Query(alias="bytes", ge=1, le=MAX_DOWNLOAD_BYTES)] = 1024 * 1024,
) -> Any:
    async def zeros() -> AsyncIterator[bytes]:
        left = size
        while left > 0:
            chunk = _CHUNK[: min(left, len(_CHUNK))]
            left -= len(chunk)
            yield chunk

    headers = {"Content-Length": str(size)}
    return StreamingResponse(zeros(), media_type="application/octet-stream", headers=headers)


@router.post("/api/agent/throughput", response_class=FastJSONResponse, response_model=Record)
async def upload(request: Request, _: Annotated[Principal, Depends(require(AGENTS))]) -> Any:
    received = 0
    async for chunk in request.stream():
        received += len(chunk)
    return FastJSONResponse({"bytes": received})
