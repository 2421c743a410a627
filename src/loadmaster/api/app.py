"""``create_app(plane)``: the FastAPI application of one server (docs/api.md).

Routers with fixed paths come first and the generic ``/api/{kind}`` ones last, so ``/api/watch`` is
never taken for a kind. FastAPI's own telemetry is off (the server exports its own metrics at
``/metrics``); body admission wraps everything, so a body from an unknown token, or an oversized or
late one, is refused before any parsing. ``limits`` caps what clients may hold (runtime/http_limits.py;
the connection limits themselves are enforced by ``api/http_protocol.py``).
"""

from __future__ import annotations

from fastapi import FastAPI

from loadmaster.api.body_admission import BodyAdmission
from loadmaster.api.docs_pages import app_with_offline_docs
from loadmaster.api.errors import install_error_handlers
from loadmaster.api.responses import ERROR_RESPONSES
from loadmaster.api.routes import (
    admin,
    agent_throughput,
    audit,
    ended,
    health,
    nodes,
    objects,
    replica_logs,
    replicas,
    rollouts,
    scale_ups,
    scheduling,
    ui,
    watch,
)
from loadmaster.api.stream_slots import StreamSlots
from loadmaster.runtime.config import DEFAULT_MAX_BODY_BYTES
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.http_limits import HttpLimits


def create_app(
    plane: ControlPlane, *, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, limits: HttpLimits | None = None
) -> FastAPI:
    limits = limits or HttpLimits()
    app = app_with_offline_docs(
        title="loadmaster",
        description="A cluster workload scheduler and control plane (see docs/api.md).",
        version=health.package_version(),
        # loadmaster serves its own /metrics; with all three off, FastAPI skips its per-request
        # OpenTelemetry checks (they read the environment on every request)
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.plane = plane
    app.state.http_limits = limits
    app.state.stream_slots = StreamSlots(limits.max_watch_streams, limits.max_watch_streams_per_token)
    app.state.object_broadcast = None
    install_error_handlers(app)
    for module in (
        health,
        admin,
        watch,
        audit,
        ended,
        nodes,
        agent_throughput,
        replicas,
        replica_logs,
        scheduling,
        rollouts,
        scale_ups,
        ui,
        objects,
    ):
        app.include_router(module.router, responses=ERROR_RESPONSES)
    app.add_middleware(
        BodyAdmission, plane=plane, max_bytes=max_body_bytes, body_timeout_s=limits.body_timeout_s
    )
    return app
