"""``POST /api/scheduling/preview``: where would these Deployments and Jobs go? (nothing is stored)
``GET /api/queue-state``: each queue's live fairness (``runtime/scheduling/explaining/queue_state.py``)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from loadmaster.api.auth import USERS, Principal, plane_of, require
from loadmaster.api.manifest_body import read_manifests
from loadmaster.api.response_schemas import PreviewResult, QueueState
from loadmaster.api.responses import FastJSONResponse
from loadmaster.api.routes.objects import APPLY_BODY_DOC
from loadmaster.manifests import DEPLOYMENT, JOB
from loadmaster.runtime.plane.admission import check_admission
from loadmaster.runtime.requests.reads.audit_reads import AuditQuery, audit_entries
from loadmaster.runtime.scheduling.explaining.queue_state import queue_state
from loadmaster.runtime.scheduling.preview.preview import evaluate_preview, prepare_preview

router = APIRouter(tags=["scheduling"])


@router.post(
    "/api/scheduling/preview",
    openapi_extra=APPLY_BODY_DOC,
    response_class=FastJSONResponse,
    response_model=PreviewResult,
)
async def scheduling_preview(request: Request, _: Annotated[Principal, Depends(require(USERS))]) -> Any:
    plane = plane_of(request)
    manifests = await read_manifests(
        await request.body(), request.headers.get("content-type", ""), allowed_kinds=(DEPLOYMENT, JOB)
    )
    check_admission(manifests, plane.settings.admission)  # 422 above the server's limits
    await plane.cache.catch_up()
    assert plane.model is not None
    now = plane.clock.now()
    ledger = plane.rebalancer.ledger.view(now.timestamp()) if plane.rebalancer is not None else None
    async with plane.model.frozen():  # the build (and the cache it reads) hold still in the thread
        prepared = await asyncio.to_thread(prepare_preview, manifests, plane.model, plane.cache, now, ledger)
    return FastJSONResponse(await asyncio.to_thread(evaluate_preview, prepared, now.timestamp()))


@router.get("/api/queue-state", response_class=FastJSONResponse, response_model=QueueState)
async def live_queue_state(request: Request, _: Annotated[Principal, Depends(require(USERS))]) -> Any:
    """Per queue: deserved, fair_share, allocated, limit, dominant_share, siblings and last_reclaim."""
    plane = plane_of(request)
    await plane.cache.catch_up()
    assert plane.model is not None
    evictions, _revision = await audit_entries(plane, AuditQuery(types=frozenset({"evict"})))
    return FastJSONResponse(await queue_state(plane.model, evictions, plane.clock.now()))
