"""Nodes: agent registration and heartbeat, the replicas an agent must run, cordon, uncordon, remove.

An agent token bound to a node registers, heartbeats and lists replicas for that node only."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from loadmaster.api.auth import ADMINS, AGENTS, Principal, plane_of, require
from loadmaster.api.body_json import json_body
from loadmaster.api.responses import FastJSONResponse
from loadmaster.runtime.requests.node_removal import remove_node
from loadmaster.runtime.requests.object_reads import replicas_on_node
from loadmaster.runtime.requests.object_writes import set_cordon
from loadmaster.runtime.requests.status_writes import heartbeat, register_node

router = APIRouter(tags=["nodes"])


@router.post("/api/nodes/register", response_class=FastJSONResponse)
async def register(request: Request, principal: Annotated[Principal, Depends(require(AGENTS))]) -> Any:
    body = await json_body(request)
    principal.check_acts_for(body.get("name") if isinstance(body, dict) else None)
    return FastJSONResponse(await register_node(plane_of(request), body, principal.role))


@router.post("/api/nodes/{name}/heartbeat", response_class=FastJSONResponse)
async def node_heartbeat(
    request: Request, name: str, principal: Annotated[Principal, Depends(require(AGENTS))]
) -> Any:
    principal.check_acts_for(name)
    return FastJSONResponse(await heartbeat(plane_of(request), name, await json_body(request, empty_ok=True)))


@router.get("/api/nodes/{name}/replicas", response_class=FastJSONResponse)
async def node_replicas(
    request: Request, name: str, principal: Annotated[Principal, Depends(require(AGENTS))]
) -> Any:
    principal.check_acts_for(name)
    items, revision = await replicas_on_node(plane_of(request), name)
    return FastJSONResponse({"items": items, "revision": revision})


@router.post("/api/nodes/{name}/cordon", response_class=FastJSONResponse)
async def cordon(
    request: Request, name: str, principal: Annotated[Principal, Depends(require(ADMINS))]
) -> Any:
    return FastJSONResponse(await set_cordon(plane_of(request), name, True, principal.role))


@router.post("/api/nodes/{name}/uncordon", response_class=FastJSONResponse)
async def uncordon(
    request: Request, name: str, principal: Annotated[Principal, Depends(require(ADMINS))]
) -> Any:
    return FastJSONResponse(await set_cordon(plane_of(request), name, False, principal.role))


@router.post("/api/nodes/{name}/remove", response_class=FastJSONResponse)
async def remove(
    request: Request, name: str, principal: Annotated[Principal, Depends(require(ADMINS))]
) -> Any:
    """Graceful removal: cordon, move every replica make-before-break, then delete the node (drain)."""
    return FastJSONResponse(await remove_node(plane_of(request), name, principal.role))
