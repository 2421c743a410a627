"""Admin endpoints: tokens, trigger a cycle, resign leadership, leader status, stats."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from loadmaster.api.auth import ADMINS, Principal, plane_of, require
from loadmaster.api.body_json import json_body
from loadmaster.api.response_schemas import Record
from loadmaster.api.responses import FastJSONResponse
from loadmaster.runtime.plane.errors import FieldProblem, InvalidError
from loadmaster.runtime.plane.tokens import ROLES
from loadmaster.runtime.requests.reads.stats import leader_status, stats
from loadmaster.runtime.requests.writes.object_writes import create_token
from loadmaster.runtime.requests.writes.status_writes import check_body

router = APIRouter(tags=["admin"])


@router.post("/api/tokens", response_class=FastJSONResponse, response_model=Record)
async def new_token(request: Request, principal: Annotated[Principal, Depends(require(ADMINS))]) -> Any:
    body = check_body(await json_body(request), ("role", "node"), required=("role",))
    role, node = body["role"], body.get("node")
    if role not in ROLES:
        problem = FieldProblem("role", f"expected one of {', '.join(ROLES)}, got {role!r}")
        raise InvalidError(f"role: {problem.message}", [problem])
    if node is not None and not isinstance(node, str):
        raise InvalidError("node: expected a node name", [FieldProblem("node", "expected a node name")])
    token = await create_token(plane_of(request), role, principal.role, node)
    return FastJSONResponse({"token": token, "role": role, **({"node": node} if node is not None else {})})


@router.post("/api/admin/trigger-reconcile", response_class=FastJSONResponse, response_model=Record)
async def trigger_reconcile(request: Request, _: Annotated[Principal, Depends(require(ADMINS))]) -> Any:
    plane = plane_of(request)
    await plane.write_fence()  # 503 not_leader on a follower: only the leader schedules
    return FastJSONResponse({"triggered": plane.trigger_reconcile()})


@router.post("/api/admin/resign-leadership", response_class=FastJSONResponse, response_model=Record)
async def resign_leadership(request: Request, _: Annotated[Principal, Depends(require(ADMINS))]) -> Any:
    plane = plane_of(request)
    was_leader = plane.is_leader
    await plane.resign()
    return FastJSONResponse({"resigned": was_leader, "self": plane.identity})


@router.get("/api/admin/leader-status", response_class=FastJSONResponse, response_model=Record)
async def get_leader_status(request: Request, _: Annotated[Principal, Depends(require(ADMINS))]) -> Any:
    return FastJSONResponse(await leader_status(plane_of(request)))


@router.get("/api/admin/stats", response_class=FastJSONResponse, response_model=Record)
async def get_stats(request: Request, _: Annotated[Principal, Depends(require(ADMINS))]) -> Any:
    return FastJSONResponse(stats(plane_of(request)))
