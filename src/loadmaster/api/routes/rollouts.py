"""Deployment rollbacks: ``POST /api/deployments/{name}/rollback`` re-applies the previous revision."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from loadmaster.api.auth import USERS, Principal, plane_of, require
from loadmaster.api.response_schemas import Record
from loadmaster.api.responses import FastJSONResponse
from loadmaster.runtime.requests.writes.rollback import rollback_deployment

router = APIRouter(tags=["objects"])


@router.post("/api/deployments/{name}/rollback", response_class=FastJSONResponse, response_model=Record)
async def rollback(
    request: Request, name: str, principal: Annotated[Principal, Depends(require(USERS))]
) -> Any:
    return FastJSONResponse(await rollback_deployment(plane_of(request), name, principal.role))
