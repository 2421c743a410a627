"""GPU device layouts memoised per node content equal the task-by-task placement: a snapshot laying out
its Running GPU tasks from layouts (its own, or those a previous snapshot left in the cache) has the
same devices and records as one placing every task in turn, and an over-committed node is still named
by its first task that does not fit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.core.device_layouts import Layout, LayoutKey, layout_of
from loadmaster.core.devices import DeviceState, place_on_devices
from loadmaster.core.model import Cluster, Job, Node, Task, TaskStatus
from loadmaster.core.resources import GPU_DEVICE
from loadmaster.core.snapshot import BOUND, RELEASING, ClusterSnapshot, SnapshotCache, SnapshotError

SHARES = [250, 500, 600, 1000, 2000]


def task_by_task(count: int, sequence: tuple[tuple[int, bool], ...]) -> list[tuple[int, ...]] | None:
    state = DeviceState.empty(np.array([count], dtype=np.int64))
    placements = []
    for amount, releasing in sequence:
        found = place_on_devices(state, 0, amount, use_releasing=False)
        if found is None:
            return None
        state.charge(0, found, amount, releasing=releasing)
        placements.append(found)
    return placements


@given(
    st.integers(0, 4),
    st.lists(st.tuples(st.sampled_from(SHARES), st.booleans()), max_size=6).map(tuple),
)
@settings(max_examples=200)
def test_a_layout_is_what_placing_the_tasks_in_turn_gives(
    count: int, sequence: tuple[tuple[int, bool], ...]
) -> None:
    memo: dict[LayoutKey, Layout] = {}
    expected = task_by_task(count, sequence)
    layout = layout_of((count, sequence), memo)
    if expected is None:
        assert layout is None and memo == {}  # a misfit is never remembered
        return
    assert layout is not None and list(layout[0]) == expected
    assert layout_of((count, sequence), memo) is layout  # the second ask is the memo's


def gpu_task(name: str, node: str | None, share: int, status: TaskStatus = TaskStatus.RUNNING) -> Task:
    return Task(name, name, {"cpu": 100, "gpu": share}, status, node)


def cluster_of(tasks: list[Task]) -> Cluster:
    capacity = {"cpu": 8000, "gpu": 4 * GPU_DEVICE}
    nodes = tuple(Node(f"n{i}", capacity, capacity) for i in range(3))
    return Cluster(nodes, tuple(Job(task.name, (task,)) for task in tasks))


def placed_in_turn(tasks: list[Task]) -> tuple[object, ...] | None:
    """The reference: every placed task in input order by the placement rule (None: one does not fit)."""
    state = DeviceState.empty(np.array([4, 4, 4], dtype=np.int64))
    records = []
    for task in tasks:
        if task.node is None:
            continue
        n, amount = int(task.node[1:]), task.request["gpu"]
        found = place_on_devices(state, n, amount, use_releasing=False)
        if found is None:
            return None
        releasing = task.status == TaskStatus.RELEASING
        state.charge(n, found, amount, releasing=releasing)
        records.append((task.name, n, found, RELEASING if releasing else BOUND))
    return state.used.tolist(), state.releasing.tolist(), records


def placed(snapshot: ClusterSnapshot) -> tuple[object, ...]:
    devices = snapshot.state.devices
    records = [
        (snapshot.tasks[t].name, r.node, r.devices, r.phase) for t, r in snapshot.state.records.items()
    ]
    return devices.used.tolist(), devices.releasing.tolist(), records


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["n0", "n1", "n2", None]),
            st.sampled_from(SHARES),
            st.sampled_from([TaskStatus.RUNNING, TaskStatus.RELEASING]),
        ),
        max_size=10,
    ),
    st.integers(0, 10),
)
@settings(max_examples=100)
def test_a_snapshot_on_a_cache_lays_out_devices_as_one_without_any(
    drawn: list[tuple[str | None, int, TaskStatus]], dropped: int
) -> None:
    tasks = [
        gpu_task(f"t{i}", node, share, status if node else TaskStatus.PENDING)
        for i, (node, share, status) in enumerate(drawn)
    ]
    later = tasks[:dropped] + tasks[dropped + 1 :]  # the next cycle: one task gone
    cache = SnapshotCache()
    for cycle in (tasks, later):  # the second on the layouts the first left in the cache
        expected = placed_in_turn(cycle)
        if expected is None:
            with pytest.raises(SnapshotError):
                ClusterSnapshot(cluster_of(cycle), cache)
        else:
            assert placed(ClusterSnapshot(cluster_of(cycle), cache)) == expected


def test_an_over_committed_node_is_named_by_its_first_task_that_does_not_fit() -> None:
    tasks = [gpu_task("a", "n0", 2000), gpu_task("b", "n0", 2000), gpu_task("c", "n0", 500)]
    with pytest.raises(SnapshotError) as refused:
        ClusterSnapshot(cluster_of(tasks), SnapshotCache())
    assert refused.value.task == "c"
