"""A node's read model carries its GPU figures (``status.gpu``): each device with its model, the share held
and the replicas holding it, the largest GPU request the node could take and its fragmented GPUs; they
are computed when read, so the stored node (and a watch event) never has them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Api, deployment

pytestmark = pytest.mark.anyio


async def register_gpu_node(api: Api, name: str, gpus: int) -> None:
    """The admin declares the node's GPU model (agents register no model); the agent's registration
    keeps it and makes the node Ready."""
    capacity = {"cpu": "8", "memory": "8Gi", "gpu": str(gpus)}
    node = f"api_version: loadmaster/v1\nkind: Node\nmetadata: {{name: {name}}}\n"
    node += f"spec: {{capacity: {{cpu: 8, memory: 8Gi, gpu: {gpus}}}, gpu_model: A100}}\n"
    assert (await api.apply(node, api.admin)).status_code == 200
    response = await api.agent.post("/api/nodes/register", json={"name": name, "capacity": capacity})
    assert response.status_code == 200, response.text


async def test_a_gpu_node_is_read_with_its_devices_holders_largest_shape_and_fragments(api: Api) -> None:
    await register_gpu_node(api, "g1", 2)
    await api.register("c1")
    applied = await api.apply(deployment("infer", replicas=3, cpu="100m", extra="gpus: 0.5"))
    assert applied.status_code == 200, applied.text
    await api.wait_phases({f"infer-api-{i}": "Scheduled" for i in range(3)})

    listed = {n["metadata"]["name"]: n for n in (await api.user.get("/api/nodes")).json()["items"]}
    one: dict[str, Any] = (await api.user.get("/api/nodes/g1")).json()
    # in creation order (then name): two halves share device 0 (the most used where a half fits), the
    # third starts device 1; no device is whole, so the largest request is the half left on device 1
    expected = {
        "largest_schedulable": 0.5,
        "fragmented": 0.0,  # the free half fits the workload's only shape, half a GPU
        "devices": [
            {"index": 0, "model": "A100", "used": 1.0, "replicas": ["infer-api-0", "infer-api-1"]},
            {"index": 1, "model": "A100", "used": 0.5, "replicas": ["infer-api-2"]},
        ],
    }
    assert listed["g1"]["status"]["gpu"] == expected
    assert one["status"]["gpu"] == expected
    assert "gpu" not in listed["c1"]["status"]  # no GPUs, no section
    stored = await api.server.plane.store.get("/objects/nodes/g1")
    assert stored is not None and b'"gpu":{' not in stored.value
