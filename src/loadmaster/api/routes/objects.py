"""Objects of every kind: apply, list, get, delete (``/api/apply``, ``/api/{kind}[/{name}]``).

Users apply and delete workloads and queues; nodes and worker templates are the admin's (a node is
normally registered by its agent). Everyone with a user token may read every kind. A node is read with
its GPU figures (``status.gpu``, computed when read: ``runtime/requests/reads/node_gpu_reads.py``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from loadmaster.api.auth import USERS, Principal, plane_of, require
from loadmaster.api.errors import ApiError
from loadmaster.api.manifest_body import read_manifests
from loadmaster.api.response_schemas import ApplyResult, DeleteResult, ObjectList, StoredObject
from loadmaster.api.responses import FastJSONResponse
from loadmaster.manifests import NODE, WORKER_TEMPLATE, ManifestError, normalize_kind
from loadmaster.runtime.plane.tokens import ADMIN
from loadmaster.runtime.requests.reads.node_gpu_reads import with_gpu_status
from loadmaster.runtime.requests.reads.object_reads import get_object, list_objects, parse_selector
from loadmaster.runtime.requests.writes.object_writes import delete_object, store_manifests

router = APIRouter(tags=["objects"])
ADMIN_KINDS = frozenset({NODE, WORKER_TEMPLATE})
APPLY_BODY_DOC = {
    "requestBody": {
        "required": True,
        "content": {
            "application/yaml": {
                "schema": {"type": "string"},
                "example": "api_version: loadmaster/v1\nkind: ...",
            },
            "application/json": {"schema": {"type": "object", "properties": {"items": {"type": "array"}}}},
        },
    }
}


def kind_of(text: str) -> str:
    try:
        return normalize_kind(text)
    except ManifestError as error:
        raise ApiError(404, "not_found", f"no such kind: {error.message}") from None


def check_kind_role(kind: str, principal: Principal) -> None:
    if kind in ADMIN_KINDS and principal.role != ADMIN:
        raise ApiError(
            403, "forbidden", f"{kind} objects are managed by admins; a {principal.role} token may not"
        )


@router.post(
    "/api/apply", openapi_extra=APPLY_BODY_DOC, response_class=FastJSONResponse, response_model=ApplyResult
)
async def apply(request: Request, principal: Annotated[Principal, Depends(require(USERS))]) -> Any:
    manifests = await read_manifests(await request.body(), request.headers.get("content-type", ""))
    for manifest in manifests:
        check_kind_role(manifest.kind, principal)
    applied = await store_manifests(plane_of(request), manifests, principal.role)
    # transactions: 1 means the apply was stored all or nothing (docs/api.md says what is atomic).
    return FastJSONResponse({"items": applied.items, "transactions": applied.transactions})


@router.get("/api/{kind}", response_class=FastJSONResponse, response_model=ObjectList)
async def list_kind(
    request: Request,
    kind: str,
    _: Annotated[Principal, Depends(require(USERS))],
    selector: Annotated[
        str | None,
        Query(
            description="kubectl's label selector: k=v, k==v, k!=v, k in (a,b), k notin (a,b), k, !k; "
            "commas join requirements (all must hold)"
        ),
    ] = None,
) -> Any:
    plane, canonical = plane_of(request), kind_of(kind)
    items, revision = await list_objects(plane, canonical, parse_selector(selector))
    if canonical == NODE:
        items = await with_gpu_status(plane, items)
    return FastJSONResponse({"items": items, "revision": revision})


@router.get("/api/{kind}/{name}", response_class=FastJSONResponse, response_model=StoredObject)
async def get_one(
    request: Request, kind: str, name: str, _: Annotated[Principal, Depends(require(USERS))]
) -> Any:
    plane, canonical = plane_of(request), kind_of(kind)
    obj = await get_object(plane, canonical, name)
    if canonical == NODE:
        (obj,) = await with_gpu_status(plane, [obj])
    return FastJSONResponse(obj)


@router.delete("/api/{kind}/{name}", response_class=FastJSONResponse, response_model=DeleteResult)
async def delete(
    request: Request, kind: str, name: str, principal: Annotated[Principal, Depends(require(USERS))]
) -> Any:
    canonical = kind_of(kind)
    check_kind_role(canonical, principal)
    await delete_object(plane_of(request), canonical, name, principal.role)
    return FastJSONResponse({"deleted": {"kind": canonical, "name": name}})
