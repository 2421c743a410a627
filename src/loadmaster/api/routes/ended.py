"""``GET /api/ended/{kind}``: the records of ended objects (Terminated replicas, removed nodes), kept
for history until the leader's cleanup deletes them ``cleanup_retention`` after they ended."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request

from loadmaster.api.auth import USERS, Principal, plane_of, require
from loadmaster.api.response_schemas import Items
from loadmaster.api.responses import FastJSONResponse
from loadmaster.runtime.requests.reads.ended_reads import ended_objects

router = APIRouter(tags=["ended"])


@router.get("/api/ended/{kind}", response_class=FastJSONResponse, response_model=Items)
async def ended(
    request: Request, kind: str, _: Annotated[Principal, Depends(require(USERS))]
) -> FastJSONResponse:
    return FastJSONResponse({"items": await ended_objects(plane_of(request), kind)})
