"""``POST /api/scheduling/preview``: where would these Deployments and Jobs go? (nothing is stored)"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from loadmaster.api.auth import USERS, Principal, plane_of, require
from loadmaster.api.manifest_body import read_manifests
from loadmaster.api.responses import FastJSONResponse
from loadmaster.api.routes.objects import APPLY_BODY_DOC
from loadmaster.manifests import DEPLOYMENT, JOB
from loadmaster.runtime.plane.admission import check_admission
from loadmaster.runtime.scheduling.preview import evaluate_preview, prepare_preview

router = APIRouter(tags=["scheduling"])


@router.post("/api/scheduling/preview", openapi_extra=APPLY_BODY_DOC, response_class=FastJSONResponse)
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
    prepared = prepare_preview(manifests, plane.model, plane.cache, now, ledger)
    items = await asyncio.to_thread(evaluate_preview, prepared, now.timestamp())
    return FastJSONResponse({"items": items})
