"""The GPU shapes a cycle without a learned distribution scores against: its own GPU tasks, each counted
once with ``GpuShape.of`` (placement/gpu_fragmentation.own_gpu_shapes, grouped as vectors)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.core.gpu_shapes import GpuShape, GpuShapes
from loadmaster.core.model import Cluster, Job, Node, Task
from loadmaster.placement.gpu_fragmentation import own_gpu_shapes, workload_shapes

GI = 2**30
NODE = Node(
    "n", {"cpu": 64_000, "memory": 256 * GI, "gpu": 8000}, {"cpu": 64_000, "memory": 256 * GI, "gpu": 8000}
)
# the same accepted models written in other orders and with repeats: one shape
MODEL_LISTS = (None, ("T4",), ("V100", "T4"), ("T4", "V100"), ("T4", "T4"), ("V100",))


def snapshot_of(requests: list[tuple[int, int, int, tuple[str, ...] | None]]) -> ClusterSnapshot:
    jobs = []
    for i, (gpu, cpu, memory, models) in enumerate(requests):
        request = {"cpu": cpu, "memory": memory} | ({"gpu": gpu} if gpu else {})
        jobs.append(Job(f"j{i}", (Task(f"t{i}", f"j{i}", request, gpu_models=models),)))
    return ClusterSnapshot(Cluster((NODE,), tuple(jobs)))


def test_tasks_are_counted_per_shape_and_gpu_free_ones_are_left_out() -> None:
    snapshot = snapshot_of(
        [(1000, 4000, GI, None), (1000, 4000, GI, None), (500, 4000, GI, None), (0, 4000, GI, None)]
    )
    assert dict(own_gpu_shapes(snapshot).weights) == {
        GpuShape(1000, 4000, GI): 2.0,
        GpuShape(500, 4000, GI): 1.0,
    }


def test_model_lists_in_another_order_are_one_shape() -> None:
    snapshot = snapshot_of(
        [(500, 1000, GI, ("V100", "T4")), (500, 1000, GI, ("T4", "V100")), (500, 1000, GI, ("T4",))]
    )
    assert dict(own_gpu_shapes(snapshot).weights) == {
        GpuShape(500, 1000, GI, ("T4", "V100")): 2.0,
        GpuShape(500, 1000, GI, ("T4",)): 1.0,
    }


@settings(max_examples=200)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([0, 0, 250, 500, 1000, 2000]),
            st.sampled_from([1000, 2000, 4000]),
            st.sampled_from([GI, 2 * GI]),
            st.sampled_from(MODEL_LISTS),
        ),
        max_size=40,
    )
)
def test_the_grouped_shapes_equal_each_task_counted_with_its_own_shape(
    requests: list[tuple[int, int, int, tuple[str, ...] | None]],
) -> None:
    snapshot = snapshot_of(requests)
    one_by_one = GpuShapes.counted(
        shape for task in snapshot.tasks if (shape := GpuShape.of(task)) is not None
    )
    assert own_gpu_shapes(snapshot) == one_by_one
    assert workload_shapes(snapshot) == one_by_one  # no learned distribution: the cluster's own
