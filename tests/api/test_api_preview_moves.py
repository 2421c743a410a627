"""Preview lists the running replicas its answer depends on (the moves and evictions that make room), and
obeys the leader's move ledger as the real cycle does."""

from __future__ import annotations

import pytest

from loadmaster.core.model import Cluster, Job, Node, SchedulerConfig, Task, TaskStatus
from loadmaster.runtime.scheduling.preview.preview import PreviewInput, evaluate_preview
from tests.api.conftest import Api

pytestmark = pytest.mark.anyio

ONE_GPU = """
api_version: loadmaster/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  services:
    - {{name: api, image: "api:1", replicas: 1, resources: {{cpu: 100m, memory: 64Mi}}, gpus: 1{extra}}}
"""
TWO_GPU_JOB = """
api_version: loadmaster/v1
kind: Job
metadata: {name: train}
spec: {tasks: 1, image: "t:1", gpus: 2}
"""


def test_a_preview_that_needs_a_move_lists_it() -> None:
    nodes = tuple(Node(f"n{i}", {"gpu": 2000}, {"gpu": 2000}) for i in (1, 2))
    train = Job("train", (Task("train-0", "train", {"gpu": 2000}),))
    jobs = (
        Job("a", (Task("a-0", "a", {"gpu": 1000}, TaskStatus.RUNNING, "n1"),)),
        Job("b", (Task("b-0", "b", {"gpu": 1000}, TaskStatus.RUNNING, "n2", hosts=("n2",)),)),
        train,
    )
    cluster = Cluster(nodes, jobs, config=SchedulerConfig())
    result = evaluate_preview(PreviewInput(cluster, (train,), frozenset({"default"})), 0.0)
    [item] = result["items"]
    assert item["node"] == "n1" and item["pipelined"] is True
    why = "consolidate: for job train (priority 50, queue default); eviction ratio 0.50 <= 2"
    move = {"replica": "a-0", "kind": "move", "action": "consolidate", "from": "n1", "to": "n2",
            "queue": "default", "why": why}  # fmt: skip
    assert item["depends_on"] == [move]
    assert result["moves"] == [move] and result["victims"] == []


async def test_a_preview_obeys_the_move_ledger_a_just_placed_replica_stays(api: Api) -> None:
    async def register(node: str, pool: str) -> None:
        body = {"name": node, "capacity": {"cpu": "4", "memory": "8Gi", "gpu": "2"}, "labels": {"pool": pool}}
        assert (await api.agent.post("/api/nodes/register", json=body)).status_code == 200

    await register("n1", "x")
    await api.apply(ONE_GPU.format(name="a", extra=""))  # a-api-0 on n1, free to move
    await api.wait_phases({"a-api-0": "Scheduled"})
    await register("n2", "y")
    await api.apply(ONE_GPU.format(name="b", extra=", node_selector: {pool: y}"))
    placed = await api.wait_phases({"a-api-0": "Scheduled", "b-api-0": "Scheduled"})
    assert placed["b-api-0"]["status"]["node_ref"] == "n2"
    before = await api.revision()
    response = await api.user.post(
        "/api/scheduling/preview", content=TWO_GPU_JOB, headers={"Content-Type": "application/yaml"}
    )
    assert response.status_code == 200, response.text
    [item] = response.json()["items"]
    # a-api-0 could make room by moving to n2 were it not placed seconds ago (10-minute cooldown)
    assert item["node"] is None and "depends_on" not in item
    assert await api.revision() == before
