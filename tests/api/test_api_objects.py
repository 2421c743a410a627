"""Objects over HTTP: apply (YAML and JSON), list, get, delete, and the replicas the loops place."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api, deployment

pytestmark = pytest.mark.anyio


async def test_apply_creates_then_reports_unchanged_then_configured(api: Api) -> None:
    first = await api.apply(deployment(replicas=1))
    assert first.status_code == 200
    assert first.json() == {
        "items": [{"kind": "Deployment", "name": "shop", "action": "created"}],
        "transactions": 1,  # stored all or nothing
    }
    unchanged = (await api.apply(deployment(replicas=1))).json()
    assert (unchanged["items"][0]["action"], unchanged["transactions"]) == ("unchanged", 0)
    assert (await api.apply(deployment(replicas=2))).json()["items"][0]["action"] == "configured"
    stored = (await api.user.get("/api/deployments/shop")).json()
    assert stored["metadata"]["generation"] == 2
    assert stored["metadata"]["revision"] > 0
    assert stored["spec"]["services"][0]["replicas"] == 2


async def test_apply_takes_json_items_too(api: Api) -> None:
    queue = {
        "api_version": "loadmaster/v1",
        "kind": "Queue",
        "metadata": {"name": "team-a"},
        "spec": {"priority": 1},
    }
    response = await api.user.post("/api/apply", json={"items": [queue]})
    assert response.status_code == 200, response.text
    assert response.json()["items"] == [{"kind": "Queue", "name": "team-a", "action": "created"}]


async def test_applied_replicas_are_placed_by_the_running_loops(api: Api) -> None:
    await api.register("n1")
    await api.apply(deployment(replicas=2))
    placed = await api.wait_phases({"shop-api-0": "Scheduled", "shop-api-1": "Scheduled"})
    assert {obj["status"]["node_ref"] for obj in placed.values()} == {"n1"}
    mine = (await api.agent.get("/api/nodes/n1/replicas")).json()["items"]
    assert [item["metadata"]["name"] for item in mine] == ["shop-api-0", "shop-api-1"]


async def test_lists_are_sorted_by_name_with_a_revision_and_filter_by_label(api: Api) -> None:
    await api.apply(
        deployment("b") + "---" + deployment("a") + "---" + deployment("c").replace("team: web", "team: ops")
    )
    listed = (await api.user.get("/api/deployments")).json()
    assert [item["metadata"]["name"] for item in listed["items"]] == ["a", "b", "c"]
    assert 0 < listed["revision"] <= await api.revision()  # the loops may write after the read
    selected = (await api.user.get("/api/deployments", params={"selector": "team=ops"})).json()
    assert [item["metadata"]["name"] for item in selected["items"]] == ["c"]
    by_singular = (await api.user.get("/api/Deployment/a")).json()
    assert by_singular["metadata"]["name"] == "a"


@pytest.mark.parametrize(
    ("path", "code"),
    [
        pytest.param("/api/deployments/nope", "not_found", id="unknown-object"),
        pytest.param("/api/gadgets", "not_found", id="unknown-kind"),
        pytest.param("/api/gadgets/x", "not_found", id="unknown-kind-with-name"),
    ],
)
async def test_reading_what_does_not_exist_is_404_with_a_json_body(api: Api, path: str, code: str) -> None:
    response = await api.user.get(path)
    assert response.status_code == 404
    assert response.json()["error"] == code
    assert response.json()["message"]


async def test_deleting_a_deployment_stops_its_replicas(api: Api) -> None:
    await api.register("n1")
    await api.apply(deployment(replicas=2))
    await api.wait_phases({"shop-api-0": "Scheduled", "shop-api-1": "Scheduled"})
    response = await api.user.delete("/api/deployments/shop")
    assert response.json() == {"deleted": {"kind": "Deployment", "name": "shop"}}
    phases = {name: obj["status"]["phase"] for name, obj in (await api.replicas()).items()}
    assert phases == {"shop-api-0": "Terminating", "shop-api-1": "Terminating"}
    assert (await api.user.delete("/api/deployments/shop")).status_code == 404
    for name in phases:  # the agent confirms; the records then go
        await api.agent.put(f"/api/replicas/{name}/status", json={"phase": "Terminated"})
    await api.wait_phases({})
