"""A GPU device layout carried across cycles (``core/columns/carried_layout.py``) is the one made anew.

Random runs of cycles over one set of nodes, each cycle the previous one's jobs with some dropped, added,
swapped, renewed (equal copies: new objects), moved to another node or flipped between Running and
Releasing, and the nodes sometimes resized: every snapshot made on the shared cache has the device rows
and task records of a snapshot of the same cluster made without any cache (or both refuse it, naming
the same task).
"""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.core.columns.snapshot import ClusterSnapshot, SnapshotCache, SnapshotError
from loadmaster.core.model import Cluster, Job, Node, Task, TaskStatus
from loadmaster.core.resources import GPU_DEVICE


def nodes_of(device_counts: tuple[int, ...]) -> tuple[Node, ...]:
    capacities = [{"cpu": 64000, "gpu": count * GPU_DEVICE} for count in device_counts]
    return tuple(Node(f"n{i}", capacity, capacity) for i, capacity in enumerate(capacities))


# Two versions of the same four nodes: n2 grows from 2 devices to 8, n3 shrinks from 8 to 2.
NODE_SETS = (nodes_of((4, 4, 2, 8)), nodes_of((4, 4, 8, 2)))
NODE_NAMES = [node.name for node in NODE_SETS[0]]
SHARES = [250, 500, 1000, 2000]
STORED = [(), (), (), (0,), (1,), (0, 1)]  # stored devices: none most often, some invalid on a node

placement = st.tuples(
    st.sampled_from([*NODE_NAMES, None]),
    st.sampled_from(SHARES),
    st.booleans(),  # releasing
    st.sampled_from(STORED),
)
step = st.one_of(
    st.tuples(st.just("add"), placement),
    st.tuples(st.just("drop"), st.integers(0, 50)),
    st.tuples(st.just("swap"), st.tuples(st.integers(0, 50), st.integers(0, 50))),
    st.tuples(st.just("renew"), st.integers(0, 50)),
    st.tuples(st.just("move"), st.tuples(st.integers(0, 50), st.sampled_from(NODE_NAMES))),
    st.tuples(st.just("flip"), st.integers(0, 50)),
    st.tuples(st.just("resize"), st.integers(0, 1)),
)


def gpu_job(name: str, drawn: tuple[str | None, int, bool, tuple[int, ...]]) -> Job:
    node, share, releasing, stored = drawn
    status = TaskStatus.PENDING if node is None else TaskStatus.RELEASING if releasing else TaskStatus.RUNNING
    task = Task(f"{name}-0", name, {"cpu": 100, "gpu": share}, status, node, devices=stored if node else ())
    return Job(name, (task,))


def changed_task(job: Job, **changes: object) -> Job:
    return dataclasses.replace(job, tasks=(dataclasses.replace(job.tasks[0], **changes),))


def applied(jobs: list[Job], kind: str, arg: object, serial: int) -> list[Job]:
    jobs = list(jobs)
    if kind == "add":
        assert isinstance(arg, tuple)
        return [*jobs, gpu_job(f"j{serial}", arg)]
    if not jobs:
        return jobs
    if kind == "swap":
        assert isinstance(arg, tuple)
        i, j = arg[0] % len(jobs), arg[1] % len(jobs)
        jobs[i], jobs[j] = jobs[j], jobs[i]
        return jobs
    i = (arg[0] if isinstance(arg, tuple) else int(str(arg))) % len(jobs)
    task = jobs[i].tasks[0]
    if kind == "drop":
        del jobs[i]
    elif kind == "renew":  # an equal job, every object new (as the replay rebuilds a changed job)
        jobs[i] = changed_task(jobs[i])
    elif kind == "move" and task.node is not None:
        assert isinstance(arg, tuple)
        jobs[i] = changed_task(jobs[i], node=arg[1], devices=())
    elif kind == "flip" and task.node is not None:
        running = task.status is TaskStatus.RUNNING
        jobs[i] = changed_task(jobs[i], status=TaskStatus.RELEASING if running else TaskStatus.RUNNING)
    return jobs


def layout_of(cluster: Cluster, cache: SnapshotCache | None) -> tuple[object, ...]:
    try:
        snapshot = ClusterSnapshot(cluster, cache)
    except SnapshotError as refused:
        return ("refused", refused.task)
    devices = snapshot.state.devices
    records = [(t, r.phase, r.node, r.devices) for t, r in snapshot.state.records.items()]
    return devices.used.tolist(), devices.releasing.tolist(), records


@given(
    st.lists(placement, max_size=12),
    st.lists(st.lists(step, max_size=4), min_size=1, max_size=6),
)
@settings(max_examples=300)
def test_a_layout_carried_across_cycles_equals_the_one_built_from_scratch(
    first: list[tuple[str | None, int, bool, tuple[int, ...]]], cycles: list[list[tuple[str, object]]]
) -> None:
    jobs = [gpu_job(f"j{i}", drawn) for i, drawn in enumerate(first)]
    cache = SnapshotCache()
    serial, nodes = len(jobs), NODE_SETS[0]
    for changes in [[], *cycles]:
        for kind, arg in changes:
            if kind == "resize":
                nodes = NODE_SETS[int(str(arg))]
                continue
            jobs = applied(jobs, kind, arg, serial)
            serial += 1
        cluster = Cluster(nodes, tuple(jobs))
        assert layout_of(cluster, cache) == layout_of(cluster, None)


def test_a_node_whose_tasks_did_not_change_keeps_its_records_and_only_a_changed_node_is_laid_out_anew() -> (
    None
):
    nodes = NODE_SETS[0]
    a, b, c = (
        gpu_job(name, (node, 500, False, ())) for name, node in (("a", "n0"), ("b", "n0"), ("c", "n1"))
    )
    cache = SnapshotCache()
    first = ClusterSnapshot(Cluster(nodes, (a, b, c)), cache).state.records
    same = ClusterSnapshot(Cluster(nodes, (a, b, c)), cache).state.records
    assert all(same[t] is first[t] for t in first)  # taken from the carry, not made again
    moved = changed_task(c, node="n0")  # n1 loses c, n0 gains it
    later = ClusterSnapshot(Cluster(nodes, (a, b, moved)), cache).state.records
    assert later[0] is not same[0] and later[2].devices == (1,)  # n0 laid out anew: a and b fill device 0
    renewed = ClusterSnapshot(Cluster(nodes, (a, b, moved, gpu_job("d", ("n1", 500, False, ())))), cache)
    assert renewed.state.records[0] is later[0]  # n0 unchanged; n1 gained d
    assert renewed.state.records[3].devices == (0,)
