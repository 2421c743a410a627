"""Admin and info routes, metrics and the OpenAPI document."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api, deployment

pytestmark = pytest.mark.anyio

METRIC_NAMES = (
    "loadmaster_decisions_total",
    "loadmaster_failures_total",
    "loadmaster_decision_duration_seconds_bucket",
    "loadmaster_e2e_duration_seconds_bucket",
    "loadmaster_retries_total",
    "loadmaster_max_retries_total",
    "loadmaster_scale_up_requests_total",
    "loadmaster_cycles_total",
)


async def test_leader_status_names_this_server_and_its_fence(shared_api: Api) -> None:
    status = (await shared_api.admin.get("/api/admin/leader-status")).json()
    assert status["is_leader"] is True
    assert status["leader"] == status["self"] == shared_api.server.plane.identity
    assert status["fence_revision"] > 0 and status["since"]


async def test_resigning_hands_over_at_once_and_this_single_server_leads_again(api: Api) -> None:
    before = (await api.admin.get("/api/admin/leader-status")).json()
    assert (await api.admin.post("/api/admin/resign-leadership")).json()["resigned"] is True

    async def leads_again() -> bool:
        status = (await api.admin.get("/api/admin/leader-status")).json()
        return bool(status["is_leader"]) and status["fence_revision"] != before["fence_revision"]

    await api.wait_until(leads_again, "a new term")
    await api.register("n1")
    await api.apply(deployment(replicas=1))
    await api.wait_phases({"shop-api-0": "Scheduled"})  # the new term schedules
    leadership = [
        e for e in (await api.user.get("/api/audit", params={"type": "leadership"})).json()["items"]
    ]
    assert len(leadership) == 2


async def test_trigger_reconcile_runs_a_cycle(api: Api) -> None:
    cycles = (await api.admin.get("/api/admin/stats")).json()["cycles"]
    assert (await api.admin.post("/api/admin/trigger-reconcile")).json() == {"triggered": True}

    async def ran() -> bool:
        return int((await api.admin.get("/api/admin/stats")).json()["cycles"]) > cycles

    await api.wait_until(ran, "a triggered cycle")


async def test_stats_count_objects_by_kind_and_replicas_by_phase(api: Api) -> None:
    await api.register("n1", cpu="1")
    await api.apply(deployment(replicas=3, cpu="400m"))

    async def settled() -> bool:
        stats = (await api.admin.get("/api/admin/stats")).json()
        return bool(stats["replicas_by_phase"] == {"Pending": 1, "Scheduled": 2})

    await api.wait_until(settled, "two scheduled and one pending")
    stats = (await api.admin.get("/api/admin/stats")).json()
    assert stats["objects"]["deployments"] == 1 and stats["objects"]["replicas"] == 3
    assert stats["nodes_by_state"] == {"Ready": 1}
    assert stats["pending_replicas"] == 1 and stats["cycles"] >= 1 and stats["last_cycle_duration_s"] > 0


async def test_info_says_version_store_and_leader(shared_api: Api) -> None:
    info = (await shared_api.user.get("/api/info")).json()
    assert info["version"] == "0.1.0" and info["store"] == "memory"
    assert info["leader"]["is_leader"] is True
    assert "objects" in info["stats"]


async def test_metrics_expose_the_documented_names(api: Api) -> None:
    await api.register("n1")
    await api.apply(deployment(replicas=1))
    await api.wait_phases({"shop-api-0": "Scheduled"})
    text = (await api.anonymous.get("/metrics")).text
    for name in METRIC_NAMES[:4] + METRIC_NAMES[-1:]:
        assert name in text, name
    assert 'loadmaster_decisions_total{action="bind"} 1.0' in text
    assert "loadmaster_e2e_duration_seconds_count 1.0" in text
    for name in (
        "# TYPE loadmaster_retries_total counter",
        "# TYPE loadmaster_max_retries_total counter",
        "# HELP loadmaster_scale_up_requests_total",
    ):
        assert name in text


async def test_the_openapi_document_lists_every_route(shared_api: Api) -> None:
    paths = (await shared_api.anonymous.get("/openapi.json")).json()["paths"]
    for path in (
        "/api/apply",
        "/api/{kind}",
        "/api/{kind}/{name}",
        "/api/nodes/register",
        "/api/nodes/{name}/heartbeat",
        "/api/nodes/{name}/replicas",
        "/api/nodes/{name}/cordon",
        "/api/nodes/{name}/uncordon",
        "/api/replicas/{name}/status",
        "/api/replicas/{name}/why",
        "/api/scheduling/preview",
        "/api/watch",
        "/api/audit",
        "/api/tokens",
        "/api/admin/trigger-reconcile",
        "/api/admin/resign-leadership",
        "/api/admin/leader-status",
        "/api/admin/stats",
        "/api/health",
        "/api/ready",
        "/api/info",
        "/metrics",
    ):
        assert path in paths, path
