"""Health (alive), readiness (the store answers), info, and Prometheus metrics."""

from __future__ import annotations

import asyncio
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST

from loadmaster.api.auth import USERS, Principal, plane_of, require
from loadmaster.api.responses import FastJSONResponse
from loadmaster.runtime.requests.stats import leader_status, stats
from loadmaster.store.interface import StoreError

router = APIRouter(tags=["health"])
READY_TIMEOUT_S = 2.0


def package_version() -> str:
    try:
        return version("loadmaster")
    except PackageNotFoundError:
        return "unknown"


@router.get("/api/health", response_class=FastJSONResponse)
async def health() -> Any:
    return FastJSONResponse({"status": "ok"})


@router.get("/api/ready", response_class=FastJSONResponse)
async def ready(request: Request) -> Any:
    plane = plane_of(request)
    try:
        async with asyncio.timeout(READY_TIMEOUT_S):
            revision = await plane.store.revision()
    except (StoreError, TimeoutError) as error:
        reason = "timed out" if isinstance(error, TimeoutError) else str(error)
        return FastJSONResponse(
            {"ready": False, "message": f"the store does not answer: {reason}"}, status_code=503
        )
    return FastJSONResponse({"ready": True, "revision": revision})


@router.get("/api/info", response_class=FastJSONResponse)
async def info(request: Request, _: Annotated[Principal, Depends(require(USERS))]) -> Any:
    plane = plane_of(request)
    return FastJSONResponse(
        {
            "version": package_version(),
            "store": plane.backend,
            "data_dir": str(plane.data_dir) if plane.data_dir is not None else None,
            "leader": await leader_status(plane),
            "stats": stats(plane),
        }
    )


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    return Response(plane_of(request).metrics.render(), media_type=CONTENT_TYPE_LATEST)
