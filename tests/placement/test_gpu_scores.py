"""The gpu_pack scorers on small clusters worked out by hand: gpu_fragmentation and gpu_headroom."""

from __future__ import annotations

import numpy as np
import pytest

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.core.gpu_shapes import GpuShape, GpuShapes
from loadmaster.core.model import Cluster, Job, Node, SchedulerConfig, Task, TaskStatus
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import ALL
from loadmaster.placement.plugins.scorers.gpu_fragmentation import GpuFragmentation
from loadmaster.placement.plugins.scorers.gpu_headroom import GpuHeadroom

GI = 2**30


def node(name: str, gpus: int, cpu: int = 16, model: str | None = None) -> Node:
    alloc = {"cpu": cpu * 1000, "memory": 64 * GI}
    if gpus:
        alloc["gpu"] = gpus * 1000
    return Node(name, alloc, alloc, gpu_model=model)


def task(name: str, gpu: int, cpu: int = 1000, on: str | None = None) -> Job:
    request = {"cpu": cpu, "memory": GI} | ({"gpu": gpu} if gpu else {})
    status = TaskStatus.RUNNING if on else TaskStatus.PENDING
    return Job(name, (Task(name, name, request, status, on),))


def scores(
    scorer: GpuFragmentation | GpuHeadroom,
    nodes: list[Node],
    jobs: list[Job],
    shapes: list[tuple[GpuShape, float]] | None = None,
) -> list[int]:
    """The scores of the last job's task on every node (all taken as feasible)."""
    config = SchedulerConfig(gpu_shapes=GpuShapes(tuple(shapes)) if shapes else None)
    snapshot = ClusterSnapshot(Cluster(tuple(nodes), tuple(jobs), config=config))
    ctx = TaskContext.of(snapshot, snapshot.n_tasks - 1)
    return scorer.score(ctx, ALL, np.ones(snapshot.n_nodes, dtype=np.bool_)).tolist()


def test_a_share_goes_to_the_used_device_when_a_free_one_would_be_lost_to_whole_gpu_tasks() -> None:
    shapes = [(GpuShape(500, 1000, GI), 2.0), (GpuShape(1000, 1000, GI), 1.0)]
    nodes = [node("a-fresh", 1), node("b-shared", 1)]
    jobs = [task("old", 500, on="b-shared"), task("new", 500)]
    # weights 2/0.5 and 1/1 -> 0.8 and 0.2. a-fresh: 1000 usable -> 0.8 * 500 = 400, lost 600 (dF = +100);
    # b-shared: 400 -> 0 (dF = -100)
    assert scores(GpuFragmentation(), nodes, jobs, shapes) == [45, 55]


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        pytest.param("T4", 50, id="taking-capacity-a-shape-could-use-scores-50"),
        pytest.param("V100", 100, id="taking-capacity-no-shape-can-use-scores-100"),
    ],
)
def test_the_score_says_how_much_usable_capacity_a_placement_takes(model: str, expected: int) -> None:
    shapes = [(GpuShape(1000, gpu_models=("T4",)), 1.0)]
    assert scores(GpuFragmentation(), [node("n", 1, model=model)], [task("t", 1000)], shapes) == [expected]


def test_breaking_up_a_whole_node_scores_0_when_it_strands_a_unit_beyond_the_task() -> None:
    # a 1-GPU task on a free 2-GPU node, against a 2-GPU shape: 2000 usable -> 0, dF = 2000 - 1000
    shapes = [(GpuShape(2000), 1.0)]
    assert scores(GpuFragmentation(), [node("n", 2)], [task("t", 1000)], shapes) == [0]


def test_cpu_only_work_on_a_node_without_gpus_changes_nothing_and_scores_50() -> None:
    nodes = [node("cpu", 0), node("gpu", 1, cpu=2)]
    # on the GPU node, its 1.5 cores leave the 1-core shape 1 GPU: nothing lost either
    assert scores(GpuFragmentation(), nodes, [task("gpu-task", 1000), task("web", 0, cpu=500)]) == [50, 50]


def test_cpu_only_work_that_uses_up_a_gpu_nodes_cpu_scores_low_there() -> None:
    nodes = [node("cpu", 0), node("gpu", 1, cpu=2)]
    # the 1-core 1-GPU shape can no longer fit once 1.5 of the 2 cores are taken: dF = +1000
    assert scores(GpuFragmentation(), nodes, [task("gpu-task", 1000), task("web", 0, cpu=1500)]) == [50, 0]


def test_infeasible_nodes_are_not_scored() -> None:
    snapshot = ClusterSnapshot(Cluster((node("a", 1), node("b", 1)), (task("t", 1000),)))
    ctx = TaskContext.of(snapshot, 0)
    out = GpuFragmentation().score(ctx, np.array([1, 0]), np.array([True, False]))
    assert out.tolist() == [50, 0]


@pytest.mark.parametrize("gpu", [600, 1000, 0])
def test_a_nodes_score_does_not_depend_on_the_nodes_scored_with_it(gpu: int) -> None:
    # 24 nodes: scored together they read the per-node cache, one by one they are computed on the spot
    used = [300, 1000, 700, 0, 2000, 500]
    nodes = [node(f"n{i:02d}", 4, cpu=8 + i) for i in range(24)]
    jobs = [task(f"r{i}", used[i % 6], cpu=2000 + 100 * i, on=f"n{i:02d}") for i in range(24)]
    snapshot = ClusterSnapshot(Cluster(tuple(nodes), (*jobs, task("t", gpu, cpu=3000))))
    ctx = TaskContext.of(snapshot, snapshot.n_tasks - 1)
    every = np.ones(24, dtype=np.bool_)
    together = GpuFragmentation().score(ctx, ALL, every).tolist()
    alone = [int(GpuFragmentation().score(ctx, np.array([n]), every[:1])[0]) for n in range(24)]
    assert alone == together
    assert len(set(together)) > 1  # the nodes do differ


@pytest.mark.parametrize(
    ("cpu", "gpu", "expected"),
    [
        pytest.param(2000, 1000, 100, id="cpu-behind-the-gpus-is-fine"),
        pytest.param(16_000, 1000, 25, id="all-cpu-taken-with-three-quarters-of-the-gpus-free"),
        pytest.param(12_000, 1000, 50, id="cpu-half-ahead-of-the-gpus"),
        pytest.param(8000, 2000, 100, id="cpu-in-step-with-the-gpus"),
        pytest.param(4000, 0, 75, id="cpu-only-work-on-a-gpu-node"),
    ],
)
def test_gpu_headroom_counts_cpu_running_ahead_of_the_gpus(cpu: int, gpu: int, expected: int) -> None:
    assert scores(GpuHeadroom(), [node("n", 4)], [task("t", gpu, cpu=cpu)]) == [expected]


def test_gpu_headroom_counts_memory_running_ahead_too_and_leaves_cpu_nodes_alone() -> None:
    heavy = Job("t", (Task("t", "t", {"cpu": 1000, "memory": 48 * GI, "gpu": 1000}),))
    assert scores(GpuHeadroom(), [node("cpu", 0), node("gpu", 4)], [heavy]) == [100, 50]
