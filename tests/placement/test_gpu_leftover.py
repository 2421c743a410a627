"""The gpu_leftover scorer (placement/plugins/scorers/gpu_leftover.py) on small clusters worked out by hand:
which tasks get it, which leftovers on the device the share takes are slivers, and how the window's upper end
follows the workload's shapes."""

from __future__ import annotations

import numpy as np
import pytest

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.core.gpu_shapes import GpuShape, GpuShapes
from loadmaster.core.model import Cluster, Job, Node, SchedulerConfig
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import ALL
from loadmaster.placement.plugins.scorers.gpu_leftover import GpuLeftover, smallest_frequent_share
from tests.placement.gpu_builders import job, node


def counted(tasks_by_share: dict[int, int]) -> GpuShapes:
    return GpuShapes.counted(GpuShape(share) for share, n in tasks_by_share.items() for _ in range(n))


# openb's shares near the bottom, per GPU task (the default pod list): 0.16 and below are 1.5 %, 0.22 is the
# first share that takes the sum past 2 %.
OPENB_LIKE = counted({50: 7, 110: 24, 160: 75, 220: 62, 320: 330, 470: 900, 1000: 5600})


def context(nodes: list[Node], jobs: list[Job], shapes: GpuShapes | None = None) -> TaskContext:
    """The last job's task, in a cluster holding the others; ``shapes``: the learned distribution."""
    config = SchedulerConfig(gpu_shapes=shapes)
    snapshot = ClusterSnapshot(Cluster(tuple(nodes), tuple(jobs), config=config))
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
def test_on_openb_shapes_the_sliver_window_is_above_60_and_below_220_milli_gpu(
    used: int, expected: int
) -> None:
    # a 0.32 share on a device with 1 - used free
    ctx = context([node("n", 1)], [job("r", used, on="n"), job("t", 320)], OPENB_LIKE)
    assert scores(ctx) == [expected]


@pytest.mark.parametrize(
    ("shapes", "usable"),
    [
        pytest.param(OPENB_LIKE, 220, id="openb-0.22"),
        pytest.param(counted({100: 3, 500: 97}), 100, id="3-percent-is-not-rare"),
        pytest.param(counted({100: 2, 500: 98}), 500, id="2-percent-is-rare"),
        pytest.param(counted({1000: 9, 2000: 1}), 1000, id="whole-gpus-only"),
        pytest.param(GpuShapes.counted([GpuShape(300, cpu=c) for c in range(3)] + [GpuShape(500)] * 97), 300,
                     id="shares-merged-by-size"),
    ],
)  # fmt: skip
def test_the_window_ends_at_the_smallest_share_the_workload_asks_often(
    shapes: GpuShapes, usable: int
) -> None:
    assert smallest_frequent_share(shapes) == usable


def test_without_learned_shapes_the_window_follows_the_clusters_own_gpu_tasks() -> None:
    # shapes of the cluster's tasks: 0.47, 0.65, 0.32, so U = 0.32 and a 0.32 share leaving 0.25 (next to a
    # 0.43) leaves a sliver, where on openb's shapes (U = 0.22) it would not
    nodes = [node("a", 1), node("b", 1)]
    jobs = [job("ra", 430, on="a"), job("rb", 650, on="b"), job("t", 320)]
    assert scores(context(nodes, jobs)) == [0, 100]
    assert scores(context(nodes, jobs, OPENB_LIKE)) == [100, 100]


def test_a_node_where_the_share_fits_no_device_leaves_no_sliver() -> None:
    assert scores(context([node("n", 1)], [job("r", 800, on="n"), job("t", 320)])) == [100]


def test_scoring_some_nodes_scores_them_as_scoring_all() -> None:
    nodes = [node("a", 1), node("b", 1), node("c", 1)]
    ctx = context(nodes, [job("ra", 470, on="a"), job("rb", 650, on="b"), job("t", 320)])
    every = scores(ctx)
    some = GpuLeftover().score(ctx, np.array([2, 0]), np.ones(2, dtype=np.bool_)).tolist()
    assert some == [every[2], every[0]]
