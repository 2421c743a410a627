"""GPU work in the control plane: placed with gpu_pack, against the shapes the scheduler has seen, and its
fragmentation shown in /metrics."""

from __future__ import annotations

import pytest

from loadmaster.core.gpu_shapes import GpuShape
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.requests.writes.status_writes import register_node
from tests.controlplane.conftest import apply, clock_of, deployment, placements, settle

pytestmark = pytest.mark.anyio
MI = 2**20

GPU_JOB = """
api_version: loadmaster/v1
kind: Job
metadata: {name: train}
spec: {tasks: 2, command: ["true"], gpus: 1, resources: {cpu: 1, memory: 64Mi}}
"""


async def add_gpu_node(plane: ControlPlane, name: str, gpus: int) -> None:
    capacity = {"cpu": "16", "memory": "64Gi", "gpu": gpus}
    await register_node(plane, {"name": name, "capacity": capacity}, "agent")


def profiles(plane: ControlPlane) -> dict[str, str | None]:
    assert plane.scheduler is not None
    build = plane.scheduler.model.build(clock_of(plane).now())
    return {job.name: job.profile for job in build.cluster.jobs}


async def test_gpu_services_and_jobs_get_gpu_pack_and_cpu_work_keeps_its_placement_profile(
    plane: ControlPlane,
) -> None:
    await apply(plane, deployment("web", replicas=1, placement="pack"))
    await apply(plane, deployment("infer", replicas=1, placement="spread", extra="gpus: 0.5"))
    await apply(plane, deployment("batch", replicas=1, placement="pack", extra="gpus: 1"))
    await apply(plane, GPU_JOB)
    await settle(plane)  # no node: every replica is made and waits
    assert profiles(plane) == {
        "web/api": "service_pack",
        "infer/api": "gpu_pack",
        "batch/api": "gpu_pack",
        "train": "gpu_pack",
    }


async def test_the_shapes_of_the_gpu_replicas_seen_are_an_input_of_every_cycle(plane: ControlPlane) -> None:
    await add_gpu_node(plane, "g1", gpus=4)
    await apply(plane, deployment("infer", replicas=3, extra="gpus: 0.5"))
    await apply(plane, deployment("web", replicas=2))
    await settle(plane)
    assert plane.scheduler is not None
    build = plane.scheduler.model.build(clock_of(plane).now())
    shapes = build.cluster.config.gpu_shapes
    assert shapes is not None
    assert dict(shapes.weights) == {GpuShape(500, 500, 64 * MI): pytest.approx(3.0)}
    assert set(placements(plane).values()) == {"g1"}


async def test_metrics_show_each_gpu_nodes_fragmentation_and_the_clusters(plane: ControlPlane) -> None:
    await add_gpu_node(plane, "g1", gpus=2)
    await add_gpu_node(plane, "g2", gpus=1)
    await apply(plane, deployment("infer", replicas=3, placement="pack", extra="gpus: 0.6"))
    await settle(plane)
    # 0.6 GPU each: one per device (0.4 left on each, a fragment for 0.6 shapes), on three devices
    assert sorted(placements(plane).values()) == ["g1", "g1", "g2"]
    text = plane.metrics.render().decode()
    assert 'loadmaster_gpu_fragmented{node="g1"} 0.8' in text
    assert 'loadmaster_gpu_fragmented{node="g2"} 0.4' in text
    assert 'loadmaster_gpu_largest_schedulable{node="g1"} 0.4' in text
    assert "loadmaster_cluster_gpu_fragmented 1.2" in text
    assert "loadmaster_cluster_gpu_largest_schedulable 0.4" in text
