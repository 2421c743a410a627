"""``GET /api/replicas/{name}/logs?tail=N&follow=true``: the replica's output, relayed from its agent.

Plain text, as the agent sends it; with ``follow`` the response stays open and new lines are relayed
until the client goes away. An agent that does not answer is a 503 naming it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

import httpx
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import StreamingResponse

from loadmaster.api.auth import USERS, Principal, plane_of, require
from loadmaster.api.errors import ApiError
from loadmaster.runtime.requests.reads.replica_logs import log_source

router = APIRouter(tags=["replicas"])
# The agent is on this machine's network; one that does not connect in this time is treated as down.
AGENT_CONNECT_TIMEOUT_S = 5.0


@router.get(
    "/api/replicas/{name}/logs",
    response_model=None,
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
)
async def replica_logs(
    request: Request,
    name: str,
    _: Annotated[Principal, Depends(require(USERS))],
    tail: Annotated[int | None, Query(ge=0, description="only the last N lines")] = None,
    follow: Annotated[bool, Query(description="keep relaying new lines")] = False,
) -> Any:
    url = await log_source(plane_of(request), name)
    params = {"follow": "1" if follow else "0", **({"tail": str(tail)} if tail is not None else {})}
    client = httpx.AsyncClient(timeout=httpx.Timeout(AGENT_CONNECT_TIMEOUT_S, read=None if follow else 30.0))
    try:
        upstream = await client.send(client.build_request("GET", url, params=params), stream=True)
    except httpx.HTTPError as exc:
        await client.aclose()
        raise ApiError(
            503, "unavailable", f"the agent at {url} did not answer: {exc or type(exc).__name__}"
        ) from None
    if upstream.status_code != 200:
        body = await upstream.aread()
        await upstream.aclose()
        await client.aclose()
        raise ApiError(
            404 if upstream.status_code == 404 else 503, "not_found", body.decode(errors="replace")[:200]
        )

    async def relay() -> AsyncIterator[bytes]:
        try:
            async for chunk in upstream.aiter_raw():
                yield chunk
        except httpx.HTTPError:
            return
        finally:
            await upstream.aclose()
            await client.aclose()

    return StreamingResponse(relay(), media_type="text/plain; charset=utf-8")
