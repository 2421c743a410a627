"""The gpu_midfill_spread scorer (placement/plugins/scorers/gpu_midfill_spread.py) on small clusters worked
out by hand: when it applies (the cluster's free GPU share) and what it scores (least allocated GPU)."""

from __future__ import annotations

import numpy as np
import pytest

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.core.model import Cluster, Job, Node
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import ALL
from loadmaster.placement.plugins.scorers.gpu_midfill_spread import GpuMidfillSpread
from tests.placement.gpu_builders import job, node


def context(nodes: list[Node], jobs: list[Job]) -> TaskContext:
    """The last job's task, in a cluster holding the others."""
    snapshot = ClusterSnapshot(Cluster(tuple(nodes), tuple(jobs)))
    return TaskContext.of(snapshot, snapshot.n_tasks - 1)


@pytest.mark.parametrize(
    ("used", "applies"),
    [
        pytest.param([1000], False, id="three-quarters-free-is-before-the-window"),
        pytest.param([1000, 1000], False, id="half-free-is-not-yet-inside"),
        pytest.param([1000, 1000, 40], True, id="0.49-free-is-inside"),
        pytest.param([1000, 1000, 600], True, id="0.35-free-is-inside"),
        pytest.param([1000, 1000, 640], False, id="0.34-free-is-past-it"),
        pytest.param([1000, 1000, 1000], False, id="a-quarter-free-is-past-it"),
    ],
)
def test_it_applies_while_the_cluster_is_under_half_and_at_least_35_percent_free(
    used: list[int], applies: bool
) -> None:
    # one node of 4 GPUs (the window is on the whole cluster's GPUs: here the node's)
    jobs = [job(f"r{i}", gpu, on="n") for i, gpu in enumerate(used)]
    assert GpuMidfillSpread().applies(context([node("n", 4)], [*jobs, job("t", 500)])) is applies


def test_a_task_without_gpus_never_gets_it() -> None:
    ctx = context([node("n", 4)], [job("r0", 1000, on="n"), job("r1", 1000, on="n"), job("t", 0)])
    assert not GpuMidfillSpread().applies(ctx)


def test_it_scores_the_gpu_share_left_on_the_node_after_the_task() -> None:
    # 8 GPUs, 5 used: 0.375 free (the cpu node adds no GPUs)
    nodes = [node("a-full", 4), node("b-half", 4), node("c-cpu", 0)]
    jobs = [job("a", 1000, on="a-full"), job("b", 1000, on="a-full"), job("c", 1000, on="a-full"),
            job("d", 2000, on="b-half"), job("t", 1000)]  # fmt: skip
    ctx = context(nodes, jobs)
    assert GpuMidfillSpread().applies(ctx)
    # a-full: 1000 free - 1000 -> 0; b-half: 2000 - 1000 = 1000 of 4000 -> 25; no GPUs -> 0
    assert GpuMidfillSpread().score(ctx, ALL, np.ones(3, dtype=np.bool_)).tolist() == [0, 25, 0]
    assert GpuMidfillSpread().score(ctx, np.array([1]), np.ones(1, dtype=np.bool_)).tolist() == [25]
