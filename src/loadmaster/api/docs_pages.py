"""The human side of the API: ``/`` leads to the dashboard (``/ui/``, routes/ui.py); Swagger UI and
ReDoc are served from assets that ship inside a pinned package (fastapi-offline), so the pages work
with no network; the OpenAPI document declares the bearer token, which gives Swagger UI its Authorize button.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.responses import RedirectResponse
from fastapi_offline import FastAPIOffline

DOCS_URL = "/docs"
DASHBOARD_URL = "/ui/"
BEARER_SCHEME = "bearer"
# The routes that take no token (routes/health.py): the document says so, so Swagger UI shows no lock.
PUBLIC_PATHS = ("/api/health", "/api/ready", "/metrics")


def app_with_offline_docs(**settings: Any) -> FastAPI:
    """A FastAPI app whose ``/docs`` and ``/redoc`` load their scripts from this server."""
    app = FastAPIOffline(docs_url=DOCS_URL, redoc_url="/redoc", **settings)

    @app.get("/", include_in_schema=False)
    async def home() -> RedirectResponse:
        return RedirectResponse(DASHBOARD_URL)

    def openapi_with_bearer() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title, version=app.version, description=app.description, routes=app.routes
            )
            schemes = document.setdefault("components", {}).setdefault("securitySchemes", {})
            schemes[BEARER_SCHEME] = {
                "type": "http",
                "scheme": "bearer",
                "description": "an admin, user or agent token (`loadmaster token create`)",
            }
            document["security"] = [{BEARER_SCHEME: []}]
            for path in PUBLIC_PATHS:
                for operation in document.get("paths", {}).get(path, {}).values():
                    operation["security"] = []
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi_with_bearer  # type: ignore[method-assign]
    return app
