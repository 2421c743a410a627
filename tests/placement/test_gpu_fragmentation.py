"""The fragmentation measure (placement/gpu_fragmentation.py) on small clusters worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.core.gpu_shapes import GpuShape, GpuShapes
from loadmaster.core.model import Cluster, Job, Node, SchedulerConfig, Task, TaskStatus
from loadmaster.placement import gpu_fragmentation
from loadmaster.placement.gpu_fragmentation import ShapeTable, fragmented_gpu, largest_gpu_shape
from loadmaster.placement.gpu_fragmentation_report import cluster_fragmented_gpus, gpu_fragmentation_report

GI = 2**30


def node(name: str, gpus: int, cpu: int = 32, model: str | None = None) -> Node:
    alloc = {"cpu": cpu * 1000, "memory": 128 * GI, "gpu": gpus * 1000}
    return Node(name, alloc, alloc, gpu_model=model)


def running(name: str, on: str, gpu: int, cpu: int = 1000) -> Job:
    return Job(name, (Task(name, name, {"cpu": cpu, "memory": GI, "gpu": gpu}, TaskStatus.RUNNING, on),))


def snapshot_of(nodes: list[Node], jobs: list[Job], shapes: list[tuple[GpuShape, float]]) -> ClusterSnapshot:
    config = SchedulerConfig(gpu_shapes=GpuShapes(tuple(shapes)))
    return ClusterSnapshot(Cluster(tuple(nodes), tuple(jobs), config=config))


def fragmented(snapshot: ClusterSnapshot) -> list[float]:
    return np.round(fragmented_gpu(snapshot, np.arange(snapshot.n_nodes)), 3).tolist()


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        pytest.param(GpuShape(1000), 700.0, id="whole-gpu-shape-cannot-use-the-0.7-left-on-a-device"),
        pytest.param(GpuShape(500), 0.0, id="half-gpu-shape-uses-every-device-with-half-free"),
        pytest.param(GpuShape(800), 700.0, id="0.8-shape-cannot-use-a-device-with-0.7-free"),
        pytest.param(GpuShape(2000), 1700.0, id="two-gpu-shape-does-not-fit-so-all-is-fragmented"),
    ],
)
def test_a_node_is_fragmented_by_the_free_gpu_its_shapes_cannot_use(shape: GpuShape, expected: float) -> None:
    # one node, devices: 0.3 used (0.7 free) and fully free
    snapshot = snapshot_of([node("n", 2)], [running("r", "n", 300)], [(shape, 1.0)])
    assert fragmented(snapshot) == [expected]


def test_the_measure_is_the_expectation_over_the_shapes_weighted_per_task() -> None:
    # 3 tasks of 1 GPU for 1 of half a GPU: weights 3/1 and 1/0.5, so 3/5 see 700 fragmented, 2/5 none
    shapes = [(GpuShape(1000), 3.0), (GpuShape(500), 1.0)]
    snapshot = snapshot_of([node("n", 2)], [running("r", "n", 300)], shapes)
    assert fragmented(snapshot) == [420.0]


def test_a_shape_s_weight_is_its_frequency_divided_by_its_gpus() -> None:
    # as often 4 GPUs as 1: a node's capacity holds 4 times fewer of the big tasks, weights 1/4 and 1
    shapes = [(GpuShape(4000), 1.0), (GpuShape(1000), 1.0)]
    snapshot = snapshot_of([node("n", 4)], [], shapes)
    assert ShapeTable.of(snapshot).weight[:, 0].tolist() == pytest.approx([1 / 5, 4 / 5])


def test_a_node_whose_model_a_shape_refuses_is_all_fragment_for_it() -> None:
    shapes = [(GpuShape(1000, gpu_models=("T4",)), 1.0)]
    snapshot = snapshot_of([node("a", 2, model="T4"), node("b", 2, model="V100")], [], shapes)
    assert fragmented(snapshot) == [0.0, 2000.0]


def test_gpus_the_node_has_no_cpu_left_for_are_fragmented() -> None:
    # 8 free GPUs and 10 of 32 cores left; the shape needs 4 cores a GPU: copies use 2.5 GPUs' worth
    snapshot = snapshot_of(
        [node("n", 8)], [running("r", "n", 0, cpu=22_000)], [(GpuShape(1000, cpu=4000), 1.0)]
    )
    assert fragmented(snapshot) == [5500.0]


def test_a_shape_that_fits_no_node_counts_for_nothing() -> None:
    shapes = [(GpuShape(1000, gpu_models=("A100",)), 5.0), (GpuShape(1000), 1.0)]
    snapshot = snapshot_of([node("n", 2, model="T4")], [running("r", "n", 300)], shapes)
    assert fragmented(snapshot) == [700.0]  # as if only the any-model shape were there


def test_shapes_are_weighted_by_how_little_of_the_cluster_they_can_use() -> None:
    # the T4 shape can use 1 GPU of 4 (s = 1/4): weight 1 / (1/4)^2 = 16 against 1 for the other
    shapes = [(GpuShape(1000, gpu_models=("T4",)), 1.0), (GpuShape(1000), 1.0)]
    snapshot = snapshot_of([node("a", 1, model="T4"), node("b", 3, model="V100")], [], shapes)
    table = ShapeTable.of(snapshot)
    assert table.weight[:, 0].tolist() == pytest.approx([16 / 17, 1 / 17])
    assert table.weight[:, 1].tolist() == pytest.approx([0.0, 1 / 17])


def test_the_shapes_kept_are_the_heaviest_by_weight_not_by_frequency(monkeypatch: pytest.MonkeyPatch) -> None:
    # one shape kept: the T4 shape, 3 times rarer but weighing 16 (s = 1/4) against the other's 3
    monkeypatch.setattr(gpu_fragmentation, "MAX_SHAPES", 1)
    shapes = [(GpuShape(1000), 3.0), (GpuShape(1000, gpu_models=("T4",)), 1.0)]
    snapshot = snapshot_of([node("a", 1, model="T4"), node("b", 3, model="V100")], [], shapes)
    table = ShapeTable.of(snapshot)
    assert table.weight.tolist() == [[1.0, 0.0]]


def test_without_given_shapes_the_clusters_own_gpu_tasks_are_the_distribution() -> None:
    jobs = [running("r", "n", 300), Job("p", (Task("p", "p", {"cpu": 1000, "gpu": 1000}),))]
    snapshot = ClusterSnapshot(Cluster((node("n", 2),), tuple(jobs)))
    assert ShapeTable.of(snapshot).gpu.tolist() == [300.0, 1000.0]


@pytest.mark.parametrize(
    ("used", "expected"),
    [
        pytest.param([], 4000, id="four-free-devices-take-four-gpus"),
        pytest.param([1000, 300], 2000, id="two-fully-free-devices-take-two-gpus"),
        pytest.param([1000, 1000, 1000, 400], 600, id="no-free-device-takes-the-largest-share-left"),
        pytest.param([1000, 1000, 1000, 1000], 0, id="a-full-node-takes-nothing"),
    ],
)
def test_the_largest_gpu_request_a_node_takes(used: list[int], expected: int) -> None:
    jobs = [running(f"r{i}", "n", gpu) for i, gpu in enumerate(used)]
    snapshot = snapshot_of([node("n", 4)], jobs, [(GpuShape(1000), 1.0)])
    assert largest_gpu_shape(snapshot, np.array([0])).tolist() == [expected]


def test_the_cluster_figure_alone_is_the_report_s_cluster_figure() -> None:
    nodes = [node("a", 2, model="T4"), node("b", 2, model="V100"), node("c", 4), node("cpu-only", 0)]
    jobs = [running("r1", "a", 300), running("r2", "c", 700), running("r3", "c", 1000)]
    shapes = [(GpuShape(1000, gpu_models=("T4",)), 1.0), (GpuShape(500), 2.0), (GpuShape(800), 1.0)]
    snapshot = snapshot_of(nodes, jobs, shapes)
    report = gpu_fragmentation_report(snapshot)
    assert report.fragmented_gpus > 0
    assert cluster_fragmented_gpus(snapshot) == report.fragmented_gpus
