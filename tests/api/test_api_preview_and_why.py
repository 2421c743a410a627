"""Preview (a dry run of the real engine that stores nothing) and why (stored and fresh explanations)."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api, deployment

pytestmark = pytest.mark.anyio


async def test_preview_ranks_candidates_explains_rejections_and_forecasts_without_storing(api: Api) -> None:
    await api.register("small", cpu="1", memory="1Gi")
    await api.register("big-a", cpu="8", memory="32Gi")
    await api.register("big-b", cpu="8", memory="32Gi")
    before = await api.revision()
    text = deployment("web", replicas=2, cpu="2", extra="placement: pack")
    response = await api.user.post(
        "/api/scheduling/preview", content=text, headers={"Content-Type": "application/yaml"}
    )
    assert response.status_code == 200, response.text
    items = response.json()["items"]
    assert [item["replica"] for item in items] == ["web-api-0", "web-api-1"]
    first = items[0]
    assert first["node"] in ("big-a", "big-b")
    assert {c["node"] for c in first["candidates"]} == {"big-a", "big-b"}
    totals = [c["total"] for c in first["candidates"]]
    assert totals == sorted(totals, reverse=True)
    assert "service_pack" in first["candidates"][0]["scores"]
    assert first["rejections"]["summary"] == {"capacity": 1}
    assert "insufficient cpu" in first["rejections"]["nodes"]["small"]
    # pack (JACO C3): the second goes to the node with the fewest replicas, the other big one
    assert {items[1]["node"], first["node"]} == {"big-a", "big-b"}
    assert first["forecast"] == {first["node"]: {"cpu": 0.25, "memory": 0.002}}  # one replica of 2 cpu of 8
    assert await api.revision() == before  # nothing stored
    assert (await api.replicas()) == {}


async def test_preview_refuses_kinds_it_cannot_place(shared_api: Api) -> None:
    text = "api_version: loadmaster/v1\nkind: Queue\nmetadata: {name: q}\nspec: {}\n"
    response = await shared_api.user.post("/api/scheduling/preview", content=text)
    assert response.status_code == 422
    assert response.json()["errors"][0]["path"] == "kind"


async def test_why_explains_a_pending_replica_afresh_with_every_node(api: Api) -> None:
    await api.register("n1", cpu="1")
    await api.register("n2", cpu="1", labels={"zone": "b"})
    await api.apply(deployment(replicas=1, cpu="2"))

    async def attempted() -> bool:
        replica = (await api.replicas()).get("shop-api-0", {})
        return bool(replica.get("status", {}).get("conditions"))

    await api.wait_until(attempted, "a first attempt")
    why = (await api.user.get("/api/replicas/shop-api-0/why")).json()
    assert (why["replica"], why["phase"], why["node_ref"]) == ("shop-api-0", "Pending", None)
    assert why["summary"] == {"capacity": 2} and set(why["nodes"]) == {"n1", "n2"}
    assert why["fresh"] is True and why["attempts"] >= 1 and why["reason"] == "Unschedulable"
    # 2 cores asked of 1-core nodes: freeing anything there never makes it fit, so no hint says it would
    assert not any("less cpu" in hint for hint in why["hints"])
    assert "next_attempt_at" in why


async def test_why_for_a_placed_replica_says_where_and_an_unknown_one_is_404(api: Api) -> None:
    await api.register("n1")
    await api.apply(deployment(replicas=1))
    await api.wait_phases({"shop-api-0": "Scheduled"})
    why = (await api.user.get("/api/replicas/shop-api-0/why")).json()
    assert (why["node_ref"], why["reason"], why["attempts"]) == ("n1", "Scheduled", 1)
    assert (await api.user.get("/api/replicas/ghost/why")).status_code == 404


async def test_why_for_a_placed_replica_ranks_its_node_against_the_runner_up(api: Api) -> None:
    await api.register("n1")
    await api.register("n2")
    # a scoring profile: spread and pack rank nodes by replica counts (no totals, so no margin)
    await api.apply(deployment(replicas=1, extra="profile: default"))
    placed = await api.wait_phases({"shop-api-0": "Scheduled"})
    node = placed["shop-api-0"]["status"]["node_ref"]
    placement = (await api.user.get("/api/replicas/shop-api-0/why")).json()["placement"]
    assert placement["node"] == node and placement["computed"] == "now"
    assert placement["scores"]["node"] == node
    assert placement["runner_up"]["node"] == ({"n1", "n2"} - {node}).pop()
    assert placement["margin"] == round(placement["scores"]["total"] - placement["runner_up"]["total"], 3)
    assert placement["margin"] >= 0 and 0 <= placement["scores"]["total"] <= 100
