"""Scale-up requests (LRS K1): a provisioner lists the open ones and closes each once its node is up."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from loadmaster.api.auth import ADMINS, USERS, Principal, plane_of, require
from loadmaster.api.response_schemas import Items, Record
from loadmaster.api.responses import FastJSONResponse
from loadmaster.runtime.requests.writes.scale_up_requests import (
    close_scale_up_request,
    list_scale_up_requests,
)

router = APIRouter(tags=["scale-up"])


@router.get("/api/scale-up-requests", response_class=FastJSONResponse, response_model=Items)
async def scale_up_requests(
    request: Request,
    _: Annotated[Principal, Depends(require(USERS))],
    state: Annotated[str | None, Query(description="open | done (default: both)")] = None,
) -> Any:
    return FastJSONResponse({"items": await list_scale_up_requests(plane_of(request), state)})


@router.post(
    "/api/scale-up-requests/{request_id}/done", response_class=FastJSONResponse, response_model=Record
)
async def scale_up_request_done(
    request: Request, request_id: str, principal: Annotated[Principal, Depends(require(ADMINS))]
) -> Any:
    return FastJSONResponse(await close_scale_up_request(plane_of(request), request_id, principal.role))
