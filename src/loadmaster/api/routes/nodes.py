"""Nodes: agent registration and heartbeat, the replicas an agent must run, cordon, uncordon, remove
(drain), and a node's node-loss timeline.

An agent token bound to a node registers, heartbeats and lists replicas for that node only."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from loadmaster.api.auth import ADMINS, AGENTS, USERS, Principal, plane_of, require
from loadmaster.api.body_json import json_body
from loadmaster.api.response_schemas import Record
from loadmaster.api.responses import FastJSONResponse
from loadmaster.runtime.requests.reads.node_loss_reads import node_loss_of
from loadmaster.runtime.requests.reads.object_reads import replicas_on_node
from loadmaster.runtime.requests.writes.node_removal import remove_node
from loadmaster.runtime.requests.writes.object_writes import set_cordon
from loadmaster.runtime.requests.writes.status_writes import heartbeat, register_node, report_node_status

router = APIRouter(tags=["nodes"])


@router.post("/api/nodes/register", response_class=FastJSONResponse, response_model=Record)
async def register(request: Request, principal: Annotated[Principal, Depends(require(AGENTS))]) -> Any:
    body = await json_body(request)
    principal.check_acts_for(body.get("name") if isinstance(body, dict) else None)
    return FastJSONResponse(await register_node(plane_of(request), body, principal.role))


@router.post("/api/nodes/{name}/heartbeat", response_class=FastJSONResponse, response_model=Record)
async def node_heartbeat(
    request: Request, name: str, principal: Annotated[Principal, Depends(require(AGENTS))]
) -> Any:
    principal.check_acts_for(name)
    return FastJSONResponse(await heartbeat(plane_of(request), name, await json_body(request, empty_ok=True)))


@router.post("/api/nodes/{name}/status", response_class=FastJSONResponse, response_model=Record)
async def node_status(
    request: Request, name: str, principal: Annotated[Principal, Depends(require(AGENTS))]
) -> Any:
    principal.check_acts_for(name)
    return FastJSONResponse(await report_node_status(plane_of(request), name, await json_body(request)))


@router.get("/api/nodes/{name}/replicas", response_class=FastJSONResponse, response_model=Record)
async def node_replicas(
    request: Request, name: str, principal: Annotated[Principal, Depends(require(AGENTS))]
) -> Any:
    principal.check_acts_for(name)
    items, revision = await replicas_on_node(plane_of(request), name)
    return FastJSONResponse({"items": items, "revision": revision})


@router.get("/api/nodes/{name}/node-loss", response_class=FastJSONResponse, response_model=Record)
async def node_loss(request: Request, name: str, _: Annotated[Principal, Depends(require(USERS))]) -> Any:
    """The node's node-loss timeline (``{"node_loss": null}`` while it is Ready)."""
    plane = plane_of(request)
    await plane.cache.catch_up()
    return FastJSONResponse({"node": name, "node_loss": node_loss_of(plane, name)})


@router.post("/api/nodes/{name}/cordon", response_class=FastJSONResponse, response_model=Record)
async def cordon(
    request: Request, name: str, principal: Annotated[Principal, Depends(require(ADMINS))]
) -> Any:
    return FastJSONResponse(await set_cordon(plane_of(request), name, True, principal.role))


@router.post("/api/nodes/{name}/uncordon", response_class=FastJSONResponse, response_model=Record)
async def uncordon(
    request: Request, name: str, principal: Annotated[Principal, Depends(require(ADMINS))]
) -> Any:
    return FastJSONResponse(await set_cordon(plane_of(request), name, False, principal.role))


@router.post("/api/nodes/{name}/remove", response_class=FastJSONResponse, response_model=Record)
async def remove(
    request: Request, name: str, principal: Annotated[Principal, Depends(require(ADMINS))]
) -> Any:
    """Graceful removal: cordon, move every replica make-before-break, then delete the node (drain)."""
    return FastJSONResponse(await remove_node(plane_of(request), name, principal.role))
