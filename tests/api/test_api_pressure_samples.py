"""Pressure samples: with a heartbeat or alone, stored on the node's status with the server's time."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api

pytestmark = pytest.mark.anyio


async def test_a_heartbeat_with_pressure_stores_the_sample_with_the_server_time(api: Api) -> None:
    await api.register("n1")
    sample = {"cpu": 0.9, "memory": 0.25, "at": "2026-01-01T00:00:00Z"}
    response = await api.agent.post("/api/nodes/n1/heartbeat", json={"pressure": sample})
    assert response.status_code == 200, response.text
    status = response.json()["status"]
    stored = status["pressure"]
    assert (stored["cpu"], stored["memory"]) == (0.9, 0.25)
    assert stored["at"] == status["last_heartbeat"]  # the server's clock (as for heartbeats), not the agent's


async def test_a_registration_may_carry_the_first_sample(api: Api) -> None:
    node = await api.register("n1", pressure={"cpu": 0.3, "memory": 0.6})
    assert node["status"]["pressure"] == {"cpu": 0.3, "memory": 0.6, "at": node["status"]["last_heartbeat"]}


async def test_a_status_report_stores_a_sample_without_counting_as_a_heartbeat(api: Api) -> None:
    node = await api.register("n1")
    response = await api.agent.post("/api/nodes/n1/status", json={"pressure": {"cpu": 0.5, "memory": 0.5}})
    assert response.status_code == 200, response.text
    status = response.json()["status"]
    assert (status["pressure"]["cpu"], status["pressure"]["memory"]) == (0.5, 0.5)
    assert status["last_heartbeat"] == node["status"]["last_heartbeat"]


@pytest.mark.parametrize(
    ("sample", "path"),
    [
        pytest.param({"cpu": 1.5, "memory": 0.1}, "pressure.cpu", id="cpu-above-one"),
        pytest.param({"cpu": 0.5, "memory": -0.1}, "pressure.memory", id="negative-memory"),
        pytest.param({"cpu": True, "memory": 0.1}, "pressure.cpu", id="boolean-cpu"),
        pytest.param({"cpu": 0.5}, "pressure.memory", id="memory-missing"),
        pytest.param({"cpu": 0.5, "memory": 0.1, "disk": 0.2}, "pressure.disk", id="unknown-field"),
        pytest.param({"cpu": 0.5, "memory": 0.1, "at": 12}, "pressure.at", id="at-not-a-timestamp"),
        pytest.param([0.5, 0.1], "pressure", id="not-an-object"),
    ],
)
async def test_a_bad_sample_is_refused_naming_the_field_and_nothing_is_stored(
    api: Api, sample: object, path: str
) -> None:
    await api.register("n1")
    for route in ("heartbeat", "status"):
        response = await api.agent.post(f"/api/nodes/n1/{route}", json={"pressure": sample})
        assert response.status_code == 422, response.text
        assert path in response.text
    node = (await api.user.get("/api/nodes/n1")).json()
    assert "pressure" not in node["status"]
