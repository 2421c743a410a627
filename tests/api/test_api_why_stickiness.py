"""``why`` says what keeps a replica on its node (AVA C9), over real HTTP on 127.0.0.1: its previous node
(a restart in place, a return to Pending) and the ephemeral volume it holds there."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Api

pytestmark = pytest.mark.anyio
NODE = """
api_version: loadmaster/v1
kind: Node
metadata: {name: n1}
spec:
  capacity: {cpu: 4, memory: 8Gi}
  volumes: [{name: data, labels: {type: ssd}, size: 100Gi}]
"""
DB = """
api_version: loadmaster/v1
kind: Deployment
metadata: {name: db}
spec:
  services:
    - name: pg
      image: registry.example/pg:16
      replicas: 1
      resources: {cpu: 1, memory: 64Mi}
      volumes: [{match_labels: {type: ssd}, size: 10Gi, ephemeral: true}]
"""
HOLDS = "holds volume type=ssd 10Gi"


async def _why(api: Api) -> dict[str, Any]:
    response = await api.user.get("/api/replicas/db-pg-0/why")
    assert response.status_code == 200, response.text
    return dict(response.json())


async def _fails(api: Api) -> None:
    """The agent runs it, then reports it failing (after executing every command written so far)."""
    status = (await api.replicas())["db-pg-0"]["status"]
    done = max((command["id"] for command in status.get("commands", [])), default=0)
    body = {"phase": "Running", "healthy": True, "commands_done": done}
    assert (await api.agent.put("/api/replicas/db-pg-0/status", json=body)).status_code == 200
    body = {"phase": "Running", "degraded": True}
    assert (await api.agent.put("/api/replicas/db-pg-0/status", json=body)).status_code == 200


async def test_why_says_a_replica_is_kept_on_its_node_for_its_previous_node_and_its_volume(api: Api) -> None:
    assert (await api.apply(NODE, api.admin)).status_code == 200
    assert (await api.agent.post("/api/nodes/n1/heartbeat", json={})).status_code == 200
    await api.apply(DB)
    await api.wait_phases({"db-pg-0": "Scheduled"})
    sticky = (await _why(api))["sticky"]
    assert (sticky["node"], sticky["because"]) == ("n1", [HOLDS])
    assert sticky["message"].startswith(f"kept on node n1: {HOLDS}")

    await _fails(api)  # n1 still passes its filters: restarted in place, n1 recorded

    async def restarted_in_place() -> bool:
        return (await api.replicas())["db-pg-0"]["status"].get("restart_count") == 1

    await api.wait_until(restarted_in_place, "the restart in place")
    why = await _why(api)
    assert (why["phase"], why["node_ref"]) == ("Running", "n1")
    assert why["sticky"]["message"].startswith(f"kept on node n1: previous node / {HOLDS}")

    assert (await api.admin.post("/api/nodes/n1/cordon")).status_code == 200
    await _fails(api)  # n1 no longer passes (cordoned): restarted elsewhere, and there is no elsewhere
    await api.wait_phases({"db-pg-0": "Pending"})
    why = await _why(api)
    assert why["sticky"]["node"] == "n1"
    assert why["sticky"]["message"].startswith(f"previous node n1 (previous node / {HOLDS})")
    assert why["summary"] == {"unschedulable": 1}

    assert (await api.admin.post("/api/nodes/n1/uncordon")).status_code == 200
    placed = await api.wait_phases({"db-pg-0": "Scheduled"})
    assert placed["db-pg-0"]["status"]["node_ref"] == "n1"
    assert (await _why(api))["sticky"]["message"].startswith(f"kept on node n1: previous node / {HOLDS}")
