"""The API's pages for people: ``/`` leads to the docs; Swagger UI and ReDoc load every script and style
from this server (no CDN: they work offline); the OpenAPI document declares the bearer token."""

from __future__ import annotations

import re

import pytest

from tests.api.conftest import Api

pytestmark = pytest.mark.anyio


async def test_the_root_redirects_to_the_dashboard(shared_api: Api) -> None:
    response = await shared_api.anonymous.get("/")
    assert response.status_code == 307
    assert response.headers["location"] == "/ui/"


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
async def test_a_docs_page_loads_its_assets_from_this_server_and_each_one_is_served(
    shared_api: Api, page: str
) -> None:
    html = (await shared_api.anonymous.get(page)).text
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets, html
    assert not [asset for asset in assets if "//" in asset], f"{page} loads from another host: {assets}"
    for asset in assets:
        response = await shared_api.anonymous.get(asset)
        assert response.status_code == 200, asset
        assert len(response.content) > 1000, asset  # a real script, style or icon, not an empty body


async def test_the_openapi_document_declares_the_bearer_token_for_swagger_uis_authorize_button(
    shared_api: Api,
) -> None:
    document = (await shared_api.anonymous.get("/openapi.json")).json()
    assert document["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "an admin, user or agent token (`loadmaster token create`)",
    }
    assert document["security"] == [{"bearer": []}]
    # the routes that take no token say so; the others inherit the bearer requirement
    for path in ("/api/health", "/api/ready", "/metrics"):
        assert document["paths"][path]["get"]["security"] == [], path
        assert (await shared_api.anonymous.get(path)).status_code in (200, 503), path
    assert "security" not in document["paths"]["/api/info"]["get"]
    assert (await shared_api.anonymous.get("/api/info")).status_code == 401
