"""Agents' routes: register, heartbeat, their node's replicas, status reports; admins' cordon."""

from __future__ import annotations

import pytest

from loadmaster.core.resources import parse_quantity
from tests.api.conftest import Api, deployment

pytestmark = pytest.mark.anyio


async def test_registration_creates_a_ready_node_and_again_updates_it(api: Api) -> None:
    node = await api.register("n1", labels={"zone": "a"}, system_reserved={"cpu": "1"})
    assert node["status"]["state"] == "Ready"
    assert node["metadata"]["labels"] == {"zone": "a"}
    assert node["spec"]["system_reserved"] == {"cpu": "1"}
    again = await api.register("n1", cpu="8")
    assert again["spec"]["capacity"]["cpu"] == "8"
    assert again["metadata"]["created_at"] == node["metadata"]["created_at"]


async def test_registration_writes_allocatable_as_capacity_less_system_reserved(api: Api) -> None:
    node = await api.register("n1", cpu="8", system_reserved={"cpu": "500m", "memory": "1Gi"})
    capacity = node["spec"]["capacity"]
    allocatable = node["status"]["allocatable"]
    assert allocatable["cpu"] == "7500m"
    assert (
        parse_quantity("memory", allocatable["memory"])
        == parse_quantity("memory", capacity["memory"]) - 2**30
    )


async def test_a_heartbeat_stamps_the_server_time_and_an_unknown_node_is_404(api: Api) -> None:
    await api.register("n1")
    response = await api.agent.post("/api/nodes/n1/heartbeat", json={"network": {"download": "120Mbps"}})
    assert response.status_code == 200
    assert response.json()["status"]["network"] == {"download": "120Mbps"}
    assert response.json()["status"]["state"] == "Ready"
    missing = await api.agent.post("/api/nodes/ghost/heartbeat", json={})
    assert (missing.status_code, missing.json()["error"]) == (404, "not_found")


async def test_cordon_and_uncordon_set_unschedulable_and_are_audited(api: Api) -> None:
    await api.register("n1")
    cordoned = await api.admin.post("/api/nodes/n1/cordon")
    assert cordoned.json()["spec"]["unschedulable"] is True
    assert (await api.admin.post("/api/nodes/n1/uncordon")).json()["spec"]["unschedulable"] is False
    types = [entry["type"] for entry in (await api.user.get("/api/audit")).json()["items"]]
    assert "cordon" in types and "uncordon" in types
    assert (await api.admin.post("/api/nodes/ghost/cordon")).status_code == 404


async def test_a_cordoned_node_gets_no_new_replicas(api: Api) -> None:
    await api.register("n1")
    await api.register("n2")
    await api.admin.post("/api/nodes/n1/cordon")
    await api.apply(deployment(replicas=3, cpu="10m"))
    placed = await api.wait_phases({f"shop-api-{i}": "Scheduled" for i in range(3)})
    assert {obj["status"]["node_ref"] for obj in placed.values()} == {"n2"}


async def test_status_reports_follow_the_phase_table(api: Api) -> None:
    await api.register("n1")
    await api.apply(deployment(replicas=1))
    await api.wait_phases({"shop-api-0": "Scheduled"})
    running = await api.agent.put("/api/replicas/shop-api-0/status", json={"phase": "Running"})
    assert running.json()["status"]["phase"] == "Running" and "started_at" in running.json()["status"]
    repeated = await api.agent.put("/api/replicas/shop-api-0/status", json={"phase": "Running"})
    assert repeated.status_code == 200  # an agent retrying is fine
    refused = await api.agent.put("/api/replicas/shop-api-0/status", json={"phase": "Terminated"})
    assert refused.status_code == 409 and refused.json()["error"] == "conflict"
    assert "cannot go from Running to Terminated" in refused.json()["message"]
    failed = await api.agent.put(
        "/api/replicas/shop-api-0/status", json={"phase": "Failed", "message": "exit 2", "exit_code": 2}
    )
    status = failed.json()["status"]
    assert (status["phase"], status["exit_code"], status["conditions"][-1]["message"]) == (
        "Failed",
        2,
        "exit 2",
    )


@pytest.mark.parametrize(
    ("body", "path"),
    [
        pytest.param({"phase": "Pending"}, "phase", id="phase-agents-do-not-report"),
        pytest.param({"phase": "Scheduled"}, "reason", id="scheduled-without-a-pull-reason"),
        pytest.param({"phase": "Failed", "healthy": True}, "healthy", id="health-of-a-replica-not-running"),
        pytest.param({"phase": "Running", "degraded": "yes"}, "degraded", id="degraded-not-a-boolean"),
        pytest.param({"phase": "Running", "commands_done": -1}, "commands_done", id="commands-done-negative"),
        pytest.param({"phase": "Running", "exit_code": "zero"}, "exit_code", id="exit-code-not-an-integer"),
        pytest.param({"phase": "Running", "uptime": 4}, "uptime", id="unknown-field"),
        pytest.param({"phase": "Running", "pid": True}, "pid", id="pid-not-an-integer"),
        pytest.param({"phase": "Running", "healthy": 1}, "healthy", id="healthy-not-a-boolean"),
        pytest.param({}, "phase", id="phase-missing"),
    ],
)
async def test_a_bad_status_report_names_the_field(
    shared_api: Api, body: dict[str, object], path: str
) -> None:
    response = await shared_api.agent.put("/api/replicas/anything/status", json=body)
    assert response.status_code == 422
    assert [e["path"] for e in response.json()["errors"]] == [path]


async def test_a_status_report_for_an_unknown_replica_is_404(shared_api: Api) -> None:
    response = await shared_api.agent.put("/api/replicas/ghost/status", json={"phase": "Running"})
    assert response.status_code == 404
