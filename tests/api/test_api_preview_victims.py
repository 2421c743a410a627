"""Preview lists the running replicas the next cycle would evict for a Job's gang (preempt, within its
queue) and for a global service (reclaim, from a queue over its deserved share): replica, node, queue
and why; and an apply of the same file then evicts exactly those."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Api

pytestmark = pytest.mark.anyio

QUEUES = """
api_version: loadmaster/v1
kind: Queue
metadata: {name: team-a}
spec: {deserved: {cpu: "8"}}
---
api_version: loadmaster/v1
kind: Queue
metadata: {name: team-b}
spec: {deserved: {cpu: "0"}}
"""
SMALL_JOB = """
api_version: loadmaster/v1
kind: Job
metadata: {{name: {name}}}
spec: {{tasks: 1, command: [x], queue: team-b, priority: 10, resources: {{cpu: "3", memory: 64Mi}}}}
"""
GANG = """
api_version: loadmaster/v1
kind: Job
metadata: {name: train}
spec:
  {tasks: 2, min_available: 2, command: [x], queue: team-b, priority: 90, resources: {cpu: "3", memory: 64Mi}}
"""
GLOBAL_SERVICE = """
api_version: loadmaster/v1
kind: Deployment
metadata: {name: ship}
spec:
  services:
    - {name: log, image: "s:1", placement: global, queue: team-a, resources: {cpu: "2", memory: 64Mi}}
"""


async def _two_running_jobs_of_team_b(api: Api) -> dict[str, str]:
    """n1 and n2 (4 cpu each), each running one 3-cpu replica of team-b: nothing else fits. -> nodes"""
    await api.register("n1")
    await api.register("n2")
    assert (await api.apply(QUEUES)).status_code == 200
    for name in ("b1", "b2"):
        assert (await api.apply(SMALL_JOB.format(name=name))).status_code == 200
    placed = await api.wait_phases({"b1-0": "Scheduled", "b2-0": "Scheduled"})
    for name in placed:
        response = await api.agent.put(f"/api/replicas/{name}/status", json={"phase": "Running"})
        assert response.status_code == 200, response.text
    await api.wait_phases({"b1-0": "Running", "b2-0": "Running"})
    return {name: obj["status"]["node_ref"] for name, obj in placed.items()}


async def _preview(api: Api, text: str) -> dict[str, Any]:
    response = await api.user.post(
        "/api/scheduling/preview", content=text, headers={"Content-Type": "application/yaml"}
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def _apply_evicts(api: Api, text: str, running: set[str], expected: set[str]) -> None:
    """Apply ``text``; its cycle leaves exactly ``expected`` of the ``running`` replicas Terminating
    (written in one cycle; the wait covers the cache seeing its transactions one by one)."""
    assert (await api.apply(text)).status_code == 200
    terminating: set[str] = set()

    async def evicted() -> bool:
        nonlocal terminating
        replicas = await api.replicas()
        terminating = {name for name in running if replicas[name]["status"]["phase"] == "Terminating"}
        return terminating == expected

    await api.wait_until(evicted, f"exactly {sorted(expected)} Terminating")


async def test_a_gang_that_must_preempt_lists_its_victims_and_apply_evicts_them(api: Api) -> None:
    nodes = await _two_running_jobs_of_team_b(api)
    result = await _preview(api, GANG)
    items = {item["replica"]: item for item in result["items"]}
    assert {items[name]["node"] for name in ("train-0", "train-1")} == {"n1", "n2"}
    assert all(item["pipelined"] is True for item in items.values())
    victims = {victim["replica"]: victim for victim in result["victims"]}
    assert set(victims) == {"b1-0", "b2-0"} and result["moves"] == []
    for name, victim in victims.items():
        assert (victim["kind"], victim["action"], victim["from"], victim["queue"]) == (
            "evict",
            "preempt",
            nodes[name],
            "team-b",
        )
        assert victim["why"].startswith("preempt: for job train (priority 90, queue team-b)")
    for item in items.values():  # each gang member names the victim on its own node
        assert [victim["from"] for victim in item["depends_on"]] == [item["node"]]
    await _apply_evicts(api, GANG, set(nodes), set(victims))


async def test_a_global_service_that_must_reclaim_lists_its_victims_and_apply_evicts_them(api: Api) -> None:
    nodes = await _two_running_jobs_of_team_b(api)
    result = await _preview(api, GLOBAL_SERVICE)
    items = {item["replica"]: item for item in result["items"]}
    assert {name: item["node"] for name, item in items.items()} == {"ship-log-n1": "n1", "ship-log-n2": "n2"}
    victims = {victim["replica"]: victim for victim in result["victims"]}
    assert set(victims) == {"b1-0", "b2-0"}
    for name, victim in victims.items():
        assert (victim["action"], victim["from"], victim["queue"]) == ("reclaim", nodes[name], "team-b")
        assert "reclaim" in victim["why"] and "ship/log" in victim["why"]
    await _apply_evicts(api, GLOBAL_SERVICE, set(nodes), set(victims))
