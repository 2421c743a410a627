"""``create_app(plane)``: the FastAPI application of one server (docs/api.md).

Routers with fixed paths come first and the generic ``/api/{kind}`` ones last, so ``/api/watch`` is
never taken for a kind. FastAPI's own telemetry is off (the server exports its own metrics at
``/metrics``); the body limit wraps everything, so an oversized body is refused before any parsing.
"""

from __future__ import annotations

from fastapi import FastAPI

from loadmaster.api.body_limit import BodyLimit
from loadmaster.api.errors import install_error_handlers
from loadmaster.api.routes import admin, audit, health, nodes, objects, replicas, scheduling, watch
from loadmaster.runtime.config import DEFAULT_MAX_BODY_BYTES
from loadmaster.runtime.control_plane import ControlPlane


def create_app(plane: ControlPlane, *, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> FastAPI:
    app = FastAPI(
        title="loadmaster",
        description="A cluster workload scheduler and control plane (see docs/api.md).",
        version=health.package_version(),
        # loadmaster serves its own /metrics; with all three off, FastAPI skips its per-request
        # OpenTelemetry checks (they read the environment on every request)
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.plane = plane
    install_error_handlers(app)
    for module in (health, admin, watch, audit, nodes, replicas, scheduling, objects):
        app.include_router(module.router)
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
    return app
