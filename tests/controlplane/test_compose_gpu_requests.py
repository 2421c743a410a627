"""Compose-style GPU requests in the control plane (B9): a service's device list matches the GPUs' driver
and capabilities a Node declares, ``gpus: all`` takes every device of its node, and each bound replica
carries the devices it was given in ``status.devices`` (what the agent exposes to the process)."""

from __future__ import annotations

import pytest

from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.requests.writes.status_writes import register_node
from tests.controlplane.conftest import apply, deployment, phase_condition, replicas, settle

pytestmark = pytest.mark.anyio

NVIDIA_NODE = """
api_version: loadmaster/v1
kind: Node
metadata: {name: nv-4}
spec:
  capacity: {cpu: "16", memory: 64Gi, gpu: 4}
  gpu_driver: nvidia
  gpu_capabilities: [compute, utility]
"""

TRAIN_ALL = """
api_version: loadmaster/v1
kind: Job
metadata: {name: train}
spec: {tasks: 1, command: ["true"], gpus: all, resources: {cpu: 1, memory: 64Mi}}
"""


async def test_device_requests_bind_with_their_devices_and_a_capability_mismatch_is_explained(
    plane: ControlPlane,
) -> None:
    await register_node(
        plane, {"name": "nv-4", "capacity": {"cpu": "16", "memory": "64Gi", "gpu": 4}}, "agent"
    )
    await apply(plane, NVIDIA_NODE)
    await register_node(
        plane, {"name": "plain-8", "capacity": {"cpu": "16", "memory": "64Gi", "gpu": 8}}, "agent"
    )
    pair = "gpus: [{driver: nvidia, count: 2, capabilities: [gpu, compute]}]"
    await apply(plane, deployment("infer", replicas=2, placement="pack", extra=pair))
    await apply(plane, deployment("video", replicas=1, extra="gpus: [{count: 1, capabilities: [video]}]"))
    await settle(plane)
    await apply(plane, TRAIN_ALL)
    await settle(plane)

    stored = replicas(plane)
    placed = {
        name: (obj["status"].get("node_ref"), obj["status"].get("devices")) for name, obj in stored.items()
    }
    assert placed["infer-api-0"][0] == placed["infer-api-1"][0] == "nv-4"
    assert sorted([placed["infer-api-0"][1], placed["infer-api-1"][1]]) == [[0, 1], [2, 3]]
    assert placed["train-0"] == ("plain-8", list(range(8)))  # every device of the node it landed on
    assert placed["video-api-0"] == (None, None)
    # both nodes are full by now (capacity), and neither has video GPUs: `why` says both
    nodes = phase_condition(stored["video-api-0"])["details"]["nodes"]
    assert all("gpus lack capabilities [video]" in nodes[name] for name in ("nv-4", "plain-8")), nodes
