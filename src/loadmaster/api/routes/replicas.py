"""Replicas: the agent's status reports and ``why`` a replica is where it is (or nowhere)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from loadmaster.api.auth import AGENTS, USERS, Principal, plane_of, require
from loadmaster.api.body_json import json_body
from loadmaster.api.response_schemas import StoredObject, WhyAnswer
from loadmaster.api.responses import FastJSONResponse
from loadmaster.runtime.requests.reads.node_loss_reads import replica_node_loss
from loadmaster.runtime.requests.writes.status_writes import report_replica_status
from loadmaster.runtime.scheduling.explaining.why import why

router = APIRouter(tags=["replicas"])


@router.put("/api/replicas/{name}/status", response_class=FastJSONResponse, response_model=StoredObject)
async def replica_status(
    request: Request, name: str, principal: Annotated[Principal, Depends(require(AGENTS))]
) -> Any:
    body = await json_body(request)
    return FastJSONResponse(await report_replica_status(plane_of(request), name, body, principal.grant))


@router.get("/api/replicas/{name}/why", response_class=FastJSONResponse, response_model=WhyAnswer)
async def replica_why(request: Request, name: str, _: Annotated[Principal, Depends(require(USERS))]) -> Any:
    plane = plane_of(request)
    await plane.cache.catch_up()
    assert plane.model is not None  # set by start(), before the app serves
    answer = await why(name, plane.model, plane.cache, plane.clock.now())
    loss = replica_node_loss(plane, name)
    if loss is not None:  # its node is NotReady (or was lost and it moved): what happens when
        answer["node_loss"] = loss
    return FastJSONResponse(answer)
