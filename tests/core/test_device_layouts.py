"""GPU device layouts memoised per node content equal the task-by-task placement (tasks with stored
devices first, keeping them while valid, then the rest, each in input order): a snapshot laying out
its Running GPU tasks from layouts (its own, or those a previous snapshot left in the cache) has the
same devices and records as one placing every task in turn, and an over-committed node is still named
by its first task that does not fit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.core.columns.device_layouts import Layout, LayoutKey, layout_of
from loadmaster.core.columns.snapshot import BOUND, RELEASING, ClusterSnapshot, SnapshotCache, SnapshotError
from loadmaster.core.devices import DeviceState, kept_devices, place_on_devices
from loadmaster.core.model import Cluster, Job, Node, Task, TaskStatus
from loadmaster.core.resources import GPU_DEVICE

SHARES = [250, 500, 600, 1000, 2000]
STORED = [(), (), (0,), (1,), (3,), (0, 1), (2, 3)]  # stored devices: none most often, some invalid
Placed = tuple[int, bool, tuple[int, ...]]  # (milli-GPU, releasing, stored devices)


def stored_first(sequence: tuple[Placed, ...]) -> list[int]:
    """The order the rule places tasks in: those with stored devices first, each group in input order."""
    return [i for i, t in enumerate(sequence) if t[2]] + [i for i, t in enumerate(sequence) if not t[2]]


def task_by_task(count: int, sequence: tuple[Placed, ...]) -> list[tuple[int, ...]] | None:
    state = DeviceState.empty(np.array([count], dtype=np.int64))
    placements: list[tuple[int, ...]] = [()] * len(sequence)
    for i in stored_first(sequence):
        amount, releasing, stored = sequence[i]
        found = kept_devices(state, 0, amount, stored) or place_on_devices(
            state, 0, amount, use_releasing=False
        )
        if found is None:
            return None
        state.charge(0, found, amount, releasing=releasing)
        placements[i] = found
    return placements


@given(
    st.integers(0, 4),
    st.lists(st.tuples(st.sampled_from(SHARES), st.booleans(), st.sampled_from(STORED)), max_size=6).map(
        tuple
    ),
)
@settings(max_examples=200)
def test_a_layout_is_what_placing_the_tasks_in_turn_gives(count: int, sequence: tuple[Placed, ...]) -> None:
    memo: dict[LayoutKey, Layout] = {}
    expected = task_by_task(count, sequence)
    layout = layout_of((count, sequence), memo)
    if expected is None:
        assert layout is None and memo == {}  # a misfit is never remembered
        return
    assert layout is not None and list(layout[0]) == expected
    assert layout_of((count, sequence), memo) is layout  # the second ask is the memo's


def gpu_task(
    name: str,
    node: str | None,
    share: int,
    status: TaskStatus = TaskStatus.RUNNING,
    devices: tuple[int, ...] = (),
) -> Task:
    return Task(name, name, {"cpu": 100, "gpu": share}, status, node, devices=devices)


def cluster_of(tasks: list[Task]) -> Cluster:
    capacity = {"cpu": 8000, "gpu": 4 * GPU_DEVICE}
    nodes = tuple(Node(f"n{i}", capacity, capacity) for i in range(3))
    return Cluster(nodes, tuple(Job(task.name, (task,)) for task in tasks))


def placed_in_turn(tasks: list[Task]) -> tuple[object, ...] | None:
    """The reference: every placed task by the placement rule, those with stored devices first (None:
    one does not fit); the records in input order."""
    state = DeviceState.empty(np.array([4, 4, 4], dtype=np.int64))
    on_nodes = [task for task in tasks if task.node is not None]
    found_for: dict[str, tuple[int, ...]] = {}
    for task in [t for t in on_nodes if t.devices] + [t for t in on_nodes if not t.devices]:
        n, amount = int(str(task.node)[1:]), task.request["gpu"]
        found = kept_devices(state, n, amount, task.devices) or place_on_devices(
            state, n, amount, use_releasing=False
        )
        if found is None:
            return None
        state.charge(n, found, amount, releasing=task.status == TaskStatus.RELEASING)
        found_for[task.name] = found
    records = [
        (
            t.name,
            int(str(t.node)[1:]),
            found_for[t.name],
            RELEASING if t.status == TaskStatus.RELEASING else BOUND,
        )
        for t in on_nodes
    ]
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
            st.sampled_from(STORED),
        ),
        max_size=10,
    ),
    st.integers(0, 10),
)
@settings(max_examples=100)
def test_a_snapshot_on_a_cache_lays_out_devices_as_one_without_any(
    drawn: list[tuple[str | None, int, TaskStatus, tuple[int, ...]]], dropped: int
) -> None:
    tasks = [
        gpu_task(f"t{i}", node, share, status, stored)
        if node
        else gpu_task(f"t{i}", None, share, TaskStatus.PENDING)
        for i, (node, share, status, stored) in enumerate(drawn)
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
