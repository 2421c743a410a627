"""Agent tokens bound to a node (``POST /api/tokens {"role": "agent", "node": N}``) act for N only: they
register, heartbeat, list and report for N and N's replicas, and are refused (403, naming both nodes)
for anything else. (Before, any agent token could rewrite any node and any replica's status.)"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from tests.api.conftest import Api, deployment

pytestmark = pytest.mark.anyio

CAPACITY = {"cpu": "4", "memory": "8Gi"}


@pytest.fixture
async def bound_to_n1(api: Api) -> AsyncIterator[httpx.AsyncClient]:
    created = await api.admin.post("/api/tokens", json={"role": "agent", "node": "n1"})
    assert created.status_code == 200, created.text
    assert created.json()["node"] == "n1"
    headers = {"Authorization": f"Bearer {created.json()['token']}"}
    async with httpx.AsyncClient(base_url=api.url, headers=headers, timeout=10.0) as client:
        yield client


def refused_for(response: httpx.Response, node: str) -> bool:
    body = response.json()
    return response.status_code == 403 and body["error"] == "forbidden" and f"nodes/{node}" in body["message"]


async def test_a_bound_agent_token_registers_heartbeats_and_lists_its_own_node(
    api: Api, bound_to_n1: httpx.AsyncClient
) -> None:
    registered = await bound_to_n1.post("/api/nodes/register", json={"name": "n1", "capacity": CAPACITY})
    assert registered.status_code == 200, registered.text
    assert (await bound_to_n1.post("/api/nodes/n1/heartbeat", json={})).status_code == 200
    assert (await bound_to_n1.get("/api/nodes/n1/replicas")).status_code == 200


async def test_a_bound_agent_token_may_not_register_heartbeat_or_list_another_node(
    api: Api, bound_to_n1: httpx.AsyncClient
) -> None:
    await api.register("sim-03", cpu="2")
    register = await bound_to_n1.post(
        "/api/nodes/register", json={"name": "sim-03", "capacity": {"cpu": "1000"}}
    )
    assert refused_for(register, "sim-03")
    assert refused_for(await bound_to_n1.post("/api/nodes/sim-03/heartbeat", json={}), "sim-03")
    assert refused_for(await bound_to_n1.get("/api/nodes/sim-03/replicas"), "sim-03")
    node = (await api.admin.get("/api/nodes/sim-03")).json()
    assert node["spec"]["capacity"]["cpu"] == "2"  # not overwritten with cpu 1000


async def test_a_bound_agent_token_reports_only_for_replicas_placed_on_its_node(
    api: Api, bound_to_n1: httpx.AsyncClient
) -> None:
    await api.register("n2")
    await api.apply(deployment(replicas=1))
    await api.wait_phases({"shop-api-0": "Scheduled"})  # on n2: the only node
    report = await bound_to_n1.put("/api/replicas/shop-api-0/status", json={"phase": "Running"})
    assert refused_for(report, "n1") and "nodes/n2" in report.json()["message"]
    await api.wait_phases({"shop-api-0": "Scheduled"})  # unchanged
    await bound_to_n1.post("/api/nodes/register", json={"name": "n1", "capacity": CAPACITY})
    await api.admin.post("/api/nodes/n2/cordon")
    await api.user.delete("/api/deployments/shop")
    await api.apply(deployment(name="web", replicas=1))
    placed = await api.wait_phases({"shop-api-0": "Terminating", "web-api-0": "Scheduled"})
    assert placed["web-api-0"]["status"]["node_ref"] == "n1"
    running = await bound_to_n1.put("/api/replicas/web-api-0/status", json={"phase": "Running"})
    assert running.status_code == 200, running.text


async def test_an_unbound_agent_token_still_acts_for_every_node(api: Api) -> None:
    for name in ("n1", "n2"):
        await api.register(name)  # the fixture's agent token was created without a node
    assert (await api.agent.post("/api/nodes/n2/heartbeat", json={})).status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"role": "user", "node": "n1"}, id="only-agents-are-bound"),
        pytest.param({"role": "agent", "node": "Not A Name"}, id="node-is-not-a-name"),
        pytest.param({"role": "agent", "node": 3}, id="node-is-not-a-string"),
    ],
)
async def test_a_token_bound_wrongly_is_refused_naming_the_node_field(
    api: Api, body: dict[str, object]
) -> None:
    response = await api.admin.post("/api/tokens", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["path"] == "node"
