"""The gpu_leftover scorer (placement/plugins/gpu_leftover.py) on small clusters worked out by hand: which
tasks get it, and which leftovers on the device the share takes are slivers."""

from __future__ import annotations

import numpy as np
import pytest

from loadmaster.core.model import Cluster, Job, Node, Task, TaskStatus
from loadmaster.core.snapshot import ClusterSnapshot
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import ALL
from loadmaster.placement.plugins.gpu_leftover import GpuLeftover

GI = 2**30


def node(name: str, gpus: int) -> Node:
    alloc = {"cpu": 64_000, "memory": 256 * GI} | ({"gpu": gpus * 1000} if gpus else {})
    return Node(name, alloc, alloc)


def job(name: str, gpu: int, on: str | None = None) -> Job:
    request = {"cpu": 1000, "memory": GI} | ({"gpu": gpu} if gpu else {})
    status = TaskStatus.RUNNING if on else TaskStatus.PENDING
    return Job(name, (Task(name, name, request, status, on),))


def context(nodes: list[Node], jobs: list[Job]) -> TaskContext:
    """The last job's task, in a cluster holding the others."""
    snapshot = ClusterSnapshot(Cluster(tuple(nodes), tuple(jobs)))
    return TaskContext.of(snapshot, snapshot.n_tasks - 1)


def scores(ctx: TaskContext) -> list[int]:
    return GpuLeftover().score(ctx, ALL, np.ones(ctx.snapshot.n_nodes, dtype=np.bool_)).tolist()


@pytest.mark.parametrize(
    ("gpu", "applies"), [(320, True), (999, True), (1000, False), (2000, False), (0, False)]
)
def test_only_tasks_asking_a_share_of_one_device_get_it(gpu: int, applies: bool) -> None:
    assert GpuLeftover().applies(context([node("n", 2)], [job("t", gpu)])) is applies


def test_a_share_scores_by_what_it_leaves_on_the_most_used_device_where_it_fits() -> None:
    # a 0.32 share: next to a 0.47 it leaves 0.21 (a sliver), next to a 0.65 it leaves 0.03, on a fresh
    # device 0.68; node d has its 0.47 device and a fresh one, and the rule takes the 0.47 one (most used)
    nodes = [node("a", 1), node("b", 1), node("c", 1), node("d", 2), node("e-cpu", 0)]
    jobs = [job("ra", 470, on="a"), job("rb", 650, on="b"), job("rd", 470, on="d"), job("t", 320)]
    assert scores(context(nodes, jobs)) == [0, 100, 100, 0, 100]


@pytest.mark.parametrize(
    ("used", "expected"),
    [
        pytest.param(620, 100, id="0.06-left-counts-as-full"),
        pytest.param(619, 0, id="0.061-left-is-a-sliver"),
        pytest.param(461, 0, id="0.219-left-is-a-sliver"),
        pytest.param(460, 100, id="0.22-left-takes-a-share"),
    ],
)
def test_the_sliver_window_is_above_60_and_below_220_milli_gpu(used: int, expected: int) -> None:
    # a 0.32 share on a device with 1 - used free
    assert scores(context([node("n", 1)], [job("r", used, on="n"), job("t", 320)])) == [expected]


def test_a_node_where_the_share_fits_no_device_leaves_no_sliver() -> None:
    assert scores(context([node("n", 1)], [job("r", 800, on="n"), job("t", 320)])) == [100]


def test_scoring_some_nodes_scores_them_as_scoring_all() -> None:
    nodes = [node("a", 1), node("b", 1), node("c", 1)]
    ctx = context(nodes, [job("ra", 470, on="a"), job("rb", 650, on="b"), job("t", 320)])
    every = scores(ctx)
    some = GpuLeftover().score(ctx, np.array([2, 0]), np.ones(2, dtype=np.bool_)).tolist()
    assert some == [every[2], every[0]]
