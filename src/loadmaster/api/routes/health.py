"""Health (alive), readiness (the store answers), info, and Prometheus metrics."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST

from loadmaster.api.auth import USERS, Principal, plane_of, require
from loadmaster.api.response_schemas import Health, Readiness, ServerInfo
from loadmaster.api.responses import FastJSONResponse
from loadmaster.runtime.requests.reads.readiness import readiness
from loadmaster.runtime.requests.reads.stats import leader_status, stats

router = APIRouter(tags=["health"])
READY_TIMEOUT_S = 2.0


def package_version() -> str:
    try:
        return version("loadmaster")
    except PackageNotFoundError:
        return "unknown"


@router.get("/api/health", response_class=FastJSONResponse, response_model=Health)
async def health() -> Any:
    return FastJSONResponse({"status": "ok"})


@router.get("/api/ready", response_class=FastJSONResponse, response_model=Readiness)
async def ready(request: Request) -> Any:
    answer = await readiness(plane_of(request), READY_TIMEOUT_S)
    return FastJSONResponse(answer, status_code=200 if answer["ready"] else 503)


@router.get("/api/info", response_class=FastJSONResponse, response_model=ServerInfo)
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


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}}}},
)
async def metrics(request: Request) -> Response:
    return Response(plane_of(request).metrics.render(), media_type=CONTENT_TYPE_LATEST)
