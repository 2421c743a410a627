"""Task columns taken partly from the previous cycle's equal the columns computed from scratch, and a
snapshot (and a whole cycle) on a cache gives exactly what it gives without one."""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from unittest.mock import patch

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.core.columns import task_columns as task_columns_module
from loadmaster.core.columns.snapshot import ClusterSnapshot, SnapshotCache
from loadmaster.core.columns.task_columns import TaskColumns, shared_prefix, task_columns
from loadmaster.core.model import Cluster, Job, Node, Queue, Task, TaskStatus
from loadmaster.cycle import run_cycle

NODE_NAMES = ["n1", "n2", "n3"]


@st.composite
def a_job(draw: st.DrawFn, index: int) -> Job:
    tasks = []
    for k in range(draw(st.integers(1, 3))):
        status = draw(st.sampled_from([TaskStatus.PENDING, TaskStatus.RUNNING, TaskStatus.RELEASING]))
        node = None if status == TaskStatus.PENDING else draw(st.sampled_from(NODE_NAMES))
        request = {"cpu": draw(st.sampled_from([0, 100, 500])), "memory": 2**20}
        if draw(st.booleans()) and draw(st.booleans()):
            request[draw(st.sampled_from(["example.com/fpga", "example.com/nic"]))] = 1000
        ports = (8080,) if draw(st.booleans()) and draw(st.booleans()) else ()
        name = f"j{index}-{k}" + (".next" if draw(st.booleans()) and draw(st.booleans()) else "")
        tasks.append(Task(name, f"j{index}", request, status, node, ports=ports))
    queue = draw(st.sampled_from(["default", "team-a", "team-b"]))
    return Job(
        f"j{index}",
        tuple(tasks),
        queue=queue,
        preemptible=draw(st.booleans()),
        profile=draw(st.sampled_from([None, "first_fit", "gpu_pack"])),
        stale_for_s=draw(st.sampled_from([None, 0.0, 90.0])),
    )


@st.composite
def two_cycles(draw: st.DrawFn) -> tuple[tuple[Job, ...], tuple[Job, ...], tuple[str, ...]]:
    """A previous job tuple and a current one sharing a prefix of the very same objects."""
    pool = [draw(a_job(i)) for i in range(draw(st.integers(0, 8)))]
    previous = tuple(pool)
    kept = draw(st.integers(0, len(pool)))
    extra = [draw(a_job(100 + i)) for i in range(draw(st.integers(0, 4)))]
    changed = [
        Job(job.name, job.tasks, job.queue, priority=7, preemptible=not job.preemptible, profile=job.profile)
        for job in pool[kept : kept + draw(st.integers(0, 2))]
    ]
    nodes = tuple(draw(st.sampled_from([NODE_NAMES, [*NODE_NAMES, "n4"]])))
    return previous, (*pool[:kept], *changed, *extra), nodes


@st.composite
def scattered_cycles(draw: st.DrawFn) -> tuple[tuple[Job, ...], tuple[Job, ...], tuple[str, ...]]:
    """A previous job tuple and a current one that keeps some of the very same objects anywhere (in
    order), drops or replaces others in the middle, and appends new ones: a replay's cluster, whose
    jobs in front of its Pending backlog start or leave."""
    pool = [draw(a_job(i)) for i in range(draw(st.integers(0, 8)))]
    current: list[Job] = []
    for job in pool:
        fate = draw(st.sampled_from(["keep", "keep", "drop", "change", "tasks"]))
        if fate == "keep":
            current.append(job)
        elif fate == "change":
            current.append(
                Job(job.name, job.tasks[:1], job.queue, priority=3, preemptible=not job.preemptible)
            )
        elif fate == "tasks":
            current.append(draw(some_tasks_changed(job)))
    current += [draw(a_job(100 + i)) for i in range(draw(st.integers(0, 3)))]
    nodes = tuple(draw(st.sampled_from([NODE_NAMES, [*NODE_NAMES, "n4"]])))
    return tuple(pool), tuple(current), nodes


@st.composite
def some_tasks_changed(draw: st.DrawFn, job: Job) -> Job:
    """The job again (a new object) with some of its very same task objects, some replaced by changed
    ones, some gone, maybe a new one; its queue or preemptibility sometimes changed too (then no task's
    columns may be kept: its share of the sums moves)."""
    tasks: list[Task] = []
    for task in job.tasks:
        fate = draw(st.sampled_from(["same", "same", "started", "gone"]))
        if fate == "same":
            tasks.append(task)
        elif fate == "started":
            tasks.append(replace(task, status=TaskStatus.RUNNING, node=draw(st.sampled_from(NODE_NAMES))))
    if draw(st.booleans()):
        tasks.append(Task(f"{job.name}-new", job.name, {"cpu": 100, "example.com/nic": 1000}))
    queue = draw(st.sampled_from([job.queue, job.queue, "team-b"]))
    preemptible = draw(st.sampled_from([job.preemptible, job.preemptible, not job.preemptible]))
    return replace(
        job,
        tasks=tuple(tasks),
        queue=queue,
        preemptible=preemptible,
        priority=draw(st.sampled_from([job.priority, 5])),
    )


def columns_of(jobs: tuple[Job, ...], nodes: tuple[str, ...], previous: TaskColumns | None) -> TaskColumns:
    index = {name: n for n, name in enumerate(nodes)}
    return task_columns(jobs, nodes, index, {"cpu", "memory"}, previous)


def assert_same(a: object, b: object, path: str = "columns") -> None:
    """Field by field (into nested dataclasses such as the carried sums); arrays by dtype and value."""
    for f in fields(a):  # type: ignore[arg-type]
        x, y, where = getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}"
        if is_dataclass(x):
            assert_same(x, y, where)
        elif isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), where
        else:
            assert x == y, where


@settings(max_examples=300)
@given(two_cycles())
def test_columns_reused_from_the_previous_cycle_equal_the_columns_from_scratch(
    cycles: tuple[tuple[Job, ...], tuple[Job, ...], tuple[str, ...]],
) -> None:
    previous_jobs, jobs, nodes = cycles
    previous = columns_of(previous_jobs, tuple(NODE_NAMES), None)
    assert_same(columns_of(jobs, nodes, previous), columns_of(jobs, nodes, None))


@settings(max_examples=300)
@given(scattered_cycles())
def test_columns_kept_job_by_job_from_the_previous_cycle_equal_the_columns_from_scratch(
    cycles: tuple[tuple[Job, ...], tuple[Job, ...], tuple[str, ...]],
) -> None:
    previous_jobs, jobs, nodes = cycles
    previous = columns_of(previous_jobs, tuple(NODE_NAMES), None)
    assert_same(columns_of(jobs, nodes, previous), columns_of(jobs, nodes, None))


SHAPE = {"cpu": 2000, "memory": 2**32, "example.com/fpga": 4000}
NODES = tuple(Node(name, SHAPE, SHAPE) for name in NODE_NAMES)


def cluster_of(jobs: tuple[Job, ...], nodes: tuple[Node, ...] = NODES) -> Cluster:
    queues = (Queue("team-a", deserved={"cpu": 1000}), Queue("team-b", deserved={"memory": 2**30}))
    return Cluster(nodes, jobs, queues)


# the current cycle's nodes: the very same objects, a cordoned one, one fewer, or the same in another order
NODE_CHANGES = [
    NODES,
    (NODES[0], Node("n2", SHAPE, SHAPE, unschedulable=True), NODES[2]),
    NODES[:2],
    tuple(reversed(NODES)),
]


@settings(max_examples=100)
@given(st.one_of(two_cycles(), scattered_cycles()), st.sampled_from(NODE_CHANGES))
def test_a_cycle_on_a_cache_plans_exactly_what_it_plans_without(
    cycles: tuple[tuple[Job, ...], tuple[Job, ...], tuple[str, ...]], nodes: tuple[Node, ...]
) -> None:
    previous_jobs, jobs, _ = cycles
    if len(nodes) < len(NODES):  # a task on the node that left is not in the cluster any more
        jobs = tuple(j for j in jobs if all(t.node in (None, "n1", "n2") for t in j.tasks))
    cache = SnapshotCache()
    ClusterSnapshot(cluster_of(previous_jobs), cache)
    current = cluster_of(jobs, nodes)
    with_cache, without = run_cycle(current, 0.0, cache), run_cycle(current, 0.0)
    assert dict(with_cache.tasks) == dict(without.tasks)
    assert with_cache.decisions == without.decisions
    assert with_cache.queues == without.queues
    assert {k: e.to_json() for k, e in with_cache.explanations.items()} == {
        k: e.to_json() for k, e in without.explanations.items()
    }


@given(st.lists(st.integers(0, 3), max_size=40), st.lists(st.integers(0, 3), max_size=40), st.integers(1, 8))
def test_the_shared_prefix_is_the_leading_run_of_equal_jobs_whatever_the_chunk(
    previous_keys: list[int], current_keys: list[int], chunk: int
) -> None:
    jobs = [Job(f"j{k}", ()) for k in range(4)]
    previous = tuple(jobs[k] for k in previous_keys)
    current = tuple(Job(f"j{k}", ()) for k in current_keys)  # equal to, not the same objects as, jobs[k]
    expected = next(
        (i for i, (a, b) in enumerate(zip(previous, current, strict=False)) if a != b),
        min(len(previous), len(current)),
    )
    assert shared_prefix(previous, current, chunk) == expected


@settings(max_examples=100)
@given(scattered_cycles())
def test_columns_gathered_through_an_index_when_cut_too_often_equal_the_columns_from_scratch(
    cycles: tuple[tuple[Job, ...], tuple[Job, ...], tuple[str, ...]],
) -> None:
    previous_jobs, jobs, nodes = cycles
    previous = columns_of(previous_jobs, tuple(NODE_NAMES), None)
    with patch.object(task_columns_module, "MAX_STRETCHES", 0):  # every column is gathered, none joined
        assert_same(columns_of(jobs, nodes, previous), columns_of(jobs, nodes, None))
