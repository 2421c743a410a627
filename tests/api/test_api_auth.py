"""Auth: 401 without a known token, 403 for a role that may not, with a JSON body saying which."""

from __future__ import annotations

import httpx
import pytest

from tests.api.conftest import Api

pytestmark = pytest.mark.anyio

NODE = {"name": "n9", "capacity": {"cpu": "1"}}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param("GET", "/api/deployments", None, id="list"),
        pytest.param("POST", "/api/apply", "kind: Queue", id="apply"),
        pytest.param("GET", "/api/watch", None, id="watch"),
        pytest.param("GET", "/api/audit", None, id="audit"),
        pytest.param("POST", "/api/nodes/register", NODE, id="register"),
        pytest.param("GET", "/api/admin/stats", None, id="admin-stats"),
        pytest.param("GET", "/api/info", None, id="info"),
    ],
)
async def test_a_request_without_a_token_is_401_with_a_json_body(
    shared_api: Api, method: str, path: str, body: object
) -> None:
    before = await shared_api.revision()
    kwargs = {"json": body} if isinstance(body, dict) else {"content": body} if body else {}
    response = await shared_api.anonymous.request(method, path, **kwargs)
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorized"
    assert "Authorization: Bearer" in response.json()["message"]
    assert await shared_api.revision() == before


async def test_an_unknown_token_is_401(shared_api: Api) -> None:
    async with httpx.AsyncClient(
        base_url=shared_api.url, headers={"Authorization": "Bearer lm_nope"}
    ) as client:
        response = await client.get("/api/deployments")
    assert (response.status_code, response.json()["error"], response.json()["message"]) == (
        401,
        "unauthorized",
        "unknown token",
    )


@pytest.mark.parametrize(
    ("role", "method", "path", "body"),
    [
        pytest.param("user", "GET", "/api/admin/stats", None, id="user-reads-admin-stats"),
        pytest.param("user", "POST", "/api/tokens", {"role": "admin"}, id="user-mints-a-token"),
        pytest.param("user", "POST", "/api/nodes/n1/cordon", None, id="user-cordons"),
        pytest.param("user", "POST", "/api/nodes/register", NODE, id="user-registers-a-node"),
        pytest.param("user", "POST", "/api/admin/resign-leadership", None, id="user-resigns-the-leader"),
        pytest.param("agent", "GET", "/api/deployments", None, id="agent-lists-deployments"),
        pytest.param("agent", "POST", "/api/scheduling/preview", None, id="agent-previews"),
        pytest.param("agent", "GET", "/api/replicas/x/why", None, id="agent-asks-why"),
    ],
)
async def test_a_role_that_may_not_gets_403_naming_what_it_needs(
    shared_api: Api, role: str, method: str, path: str, body: object
) -> None:
    client = shared_api.user if role == "user" else shared_api.agent
    before = await shared_api.revision()
    response = await client.request(method, path, json=body)
    assert response.status_code == 403, response.text
    assert response.json()["error"] == "forbidden"
    assert f"a {role} token may not" in response.json()["message"]
    assert await shared_api.revision() == before


async def test_a_user_may_not_apply_nodes_but_an_admin_may(shared_api: Api) -> None:
    node = "api_version: loadmaster/v1\nkind: Node\nmetadata: {name: applied}\nspec: {capacity: {cpu: 2}}\n"
    refused = await shared_api.apply(node)
    assert refused.status_code == 403 and "Node objects are managed by admins" in refused.json()["message"]
    accepted = await shared_api.apply(node, shared_api.admin)
    assert accepted.status_code == 200
    assert (await shared_api.admin.delete("/api/nodes/applied")).status_code == 200


@pytest.mark.parametrize("path", ["/api/health", "/api/ready", "/metrics", "/openapi.json", "/docs"])
async def test_health_readiness_metrics_and_the_openapi_need_no_token(shared_api: Api, path: str) -> None:
    assert (await shared_api.anonymous.get(path)).status_code == 200


async def test_a_new_token_works_with_its_role_and_is_stored_hashed(shared_api: Api) -> None:
    response = await shared_api.admin.post("/api/tokens", json={"role": "user"})
    token = response.json()["token"]
    entries, _ = await shared_api.server.plane.store.list("/tokens/")
    assert all(token.encode() not in entry.value and token not in entry.key for entry in entries)
    async with httpx.AsyncClient(
        base_url=shared_api.url, headers={"Authorization": f"Bearer {token}"}
    ) as client:
        assert (await client.get("/api/queues")).status_code == 200
    bad = await shared_api.admin.post("/api/tokens", json={"role": "root"})
    assert bad.status_code == 422 and bad.json()["errors"][0]["path"] == "role"
