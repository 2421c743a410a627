"""Agents' health, exit and pull reports through HTTP, the leader's restarts, and ended records."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Api, deployment

pytestmark = pytest.mark.anyio


async def _running(api: Api, name: str = "shop-api-0") -> None:
    await api.wait_phases({name: "Scheduled"})
    response = await api.agent.put(f"/api/replicas/{name}/status", json={"phase": "Running", "healthy": True})
    assert response.status_code == 200, response.text


async def _replica(api: Api, name: str = "shop-api-0") -> dict[str, Any]:
    return (await api.replicas())[name]


async def test_a_degraded_replica_is_restarted_through_commands_and_a_healthy_report_clears_the_count(
    api: Api,
) -> None:
    await api.register("n1")
    await api.apply(deployment(replicas=1))
    await _running(api)
    degraded = await api.agent.put(
        "/api/replicas/shop-api-0/status", json={"phase": "Running", "degraded": True}
    )
    assert degraded.status_code == 200, degraded.text

    async def restarted() -> bool:
        return bool((await _replica(api))["status"].get("commands"))

    await api.wait_until(restarted, "the leader's restart commands")
    status = (await _replica(api))["status"]
    assert [(c["id"], c["type"]) for c in status["commands"]] == [(1, "remove_from_routing"), (2, "restart")]
    assert (status["restart_count"], status["healthy"], "failure" in status) == (1, False, False)
    done = await api.agent.put(
        "/api/replicas/shop-api-0/status", json={"phase": "Running", "commands_done": 2, "healthy": True}
    )
    assert (done.json()["status"]["restart_count"], done.json()["status"]["commands_done"]) == (0, 2)
    types = [entry["type"] for entry in (await api.user.get("/api/audit")).json()["items"]]
    assert "replica_restarted" in types


async def test_a_failed_pull_keeps_the_replica_scheduled_and_why_says_so(api: Api) -> None:
    await api.register("n1")
    await api.apply(deployment(replicas=1))
    await api.wait_phases({"shop-api-0": "Scheduled"})
    body = {
        "phase": "Scheduled",
        "reason": "image_pull_failed",
        "message": "registry.example/api:1: not found",
    }
    for _ in range(2):  # the agent retries: one audit entry for the episode
        assert (await api.agent.put("/api/replicas/shop-api-0/status", json=body)).status_code == 200
    why = (await api.user.get("/api/replicas/shop-api-0/why")).json()
    assert (why["phase"], why["reason"], why["message"]) == (
        "Scheduled",
        "image_pull_failed",
        "registry.example/api:1: not found",
    )
    entries = (await api.user.get("/api/audit", params={"type": "image_pull_failed"})).json()["items"]
    assert [(e["object"], e["message"]) for e in entries] == [
        ("replicas/shop-api-0", "registry.example/api:1: not found")
    ]


async def test_a_deleted_node_stays_readable_as_an_ended_record(api: Api) -> None:
    await api.register("n1", labels={"zone": "a"})
    assert (await api.admin.delete("/api/nodes/n1")).status_code in (200, 204)
    assert (await api.user.get("/api/nodes/n1")).status_code == 404
    ended = (await api.user.get("/api/ended/nodes")).json()["items"]
    assert [(n["metadata"]["name"], n["metadata"]["labels"]) for n in ended] == [("n1", {"zone": "a"})]
    assert "ended_at" in ended[0]["metadata"]
    assert (await api.user.get("/api/ended/gadgets")).status_code == 422


async def test_why_says_when_a_replica_before_its_time_slot_will_be_considered(api: Api) -> None:
    await api.register("n1")
    job = (
        "api_version: loadmaster/v1\nkind: Job\nmetadata: {name: later}\nspec: {tasks: 1, command: [x], "
        'timeslot: {start: "2099-01-01T12:00:00Z", end: "2099-01-01T13:00:00Z"}}\n'
    )
    assert (await api.apply(job)).status_code == 200
    await api.wait_phases({"later-0": "Pending"})
    why = (await api.user.get("/api/replicas/later-0/why")).json()
    assert why["reason"] == "TimeslotNotOpen"
    assert "considered for placement from 2099-01-01T11:25:00Z" in why["message"]
