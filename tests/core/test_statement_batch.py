"""``Statement.allocate_many``: one log entry with exactly the effect of ``allocate`` per task, exact undo,
listeners told the same totals, and bad calls refused with nothing changed."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.core.columns.snapshot import ClusterSnapshot, SnapshotError
from loadmaster.core.model import Cluster, Job, Node, Task, TaskStatus
from loadmaster.core.working.statement import Statement
from loadmaster.placement.engine import PlacementEngine
from loadmaster.placement.profile import profile_for
from tests.core.test_statement import _arrays, _same

GI = 2**30


@st.composite
def batches(draw: st.DrawFn) -> tuple[Cluster, list[int]]:
    """Single-task jobs and one multi-task job, all with the same request; a random subset of them
    (in index order) to bind, each to a node where it fits (as the engine would pick them)."""
    nodes = [
        Node(f"node-{i}", alloc, alloc)
        for i, alloc in enumerate(
            {
                "cpu": draw(st.integers(2, 8)) * 1000,
                "memory": 16 * GI,
                "gpu": draw(st.sampled_from([0, 2, 4])) * 1000,
            }
            for _ in range(draw(st.integers(1, 5)))
        )
    ]
    request = {
        "cpu": 1000,
        "memory": GI,
        **({"gpu": draw(st.sampled_from([1000, 2000, 500]))} if draw(st.booleans()) else {}),
    }
    jobs = [
        Job(f"solo-{j}", (Task(f"solo-{j}", f"solo-{j}", dict(request)),))
        for j in range(draw(st.integers(0, 3)))
    ]
    size = draw(st.integers(1, 6))
    jobs.append(
        Job("gang", tuple(Task(f"gang-{k}", "gang", dict(request)) for k in range(size)), min_available=size)
    )
    if draw(st.booleans()):  # something already running, holding a device
        jobs.append(Job("old", (Task("old", "old", {"cpu": 500}, TaskStatus.RUNNING, "node-0"),)))
    total = sum(len(job.tasks) for job in jobs if job.name != "old")
    chosen = sorted(draw(st.sets(st.integers(0, total - 1), min_size=1)))
    return Cluster(tuple(nodes), tuple(jobs)), chosen


def _placements(snapshot: ClusterSnapshot, tasks: list[int]) -> tuple[list[int], list[int]]:
    """Where the engine puts each task in turn (on a scratch statement, undone)."""
    engine, scratch = PlacementEngine(snapshot, profile_for(snapshot.config)), Statement(snapshot)
    placed_tasks, nodes = [], []
    for t in tasks:
        choice = engine.choose(t)
        if choice.placed:
            scratch.allocate(t, choice.node)
            placed_tasks.append(t)
            nodes.append(choice.node)
    scratch.discard()
    return placed_tasks, nodes


def _listened(statement: Statement) -> dict[str, int]:
    heard: dict[str, int] = {}

    def listener(t: int, delta: int) -> None:
        job = statement.snapshot.job_of_task(t).name
        heard[job] = heard.get(job, 0) + delta

    statement.listeners.append(listener)
    return heard


@settings(max_examples=120)
@given(case=batches())
def test_allocate_many_equals_allocate_one_by_one_and_its_rollback_is_exact(
    case: tuple[Cluster, list[int]],
) -> None:
    cluster, chosen = case
    one, many = ClusterSnapshot(cluster), ClusterSnapshot(cluster)
    tasks, nodes = _placements(one, chosen)
    if not tasks:
        return
    one_statement, many_statement = Statement(one), Statement(many)
    heard_one, heard_many = _listened(one_statement), _listened(many_statement)
    before, records_before = _arrays(many.state), copy.copy(many.state.records)
    for t, n in zip(tasks, nodes, strict=True):
        one_statement.allocate(t, n, "allocate", "why")
    many_statement.allocate_many(tasks, nodes, "allocate", "why")

    assert _same(_arrays(many.state), _arrays(one.state))
    assert many.state.records == one.state.records
    assert heard_many == heard_one
    gpu = int(many.task_request[many.gpu_row, tasks[0]])
    assert many_statement.checkpoint() == (len(tasks) if 0 < gpu < 1000 else 1)  # fractions: one by one
    many_statement.rollback(0)
    assert _same(_arrays(many.state), before)
    assert many.state.records == records_before
    assert all(delta == 0 for delta in heard_many.values())


@settings(max_examples=60)
@given(case=batches())
def test_allocate_many_commits_the_same_decisions_as_allocate(case: tuple[Cluster, list[int]]) -> None:
    cluster, chosen = case
    one, many = ClusterSnapshot(cluster), ClusterSnapshot(cluster)
    tasks, nodes = _placements(one, chosen)
    one_statement, many_statement = Statement(one), Statement(many)
    for t, n in zip(tasks, nodes, strict=True):
        one_statement.allocate(t, n, "allocate", "why")
    many_statement.allocate_many(tasks, nodes, "allocate", "why")
    assert many_statement.commit() == one_statement.commit()


def _cluster() -> Cluster:
    alloc = {"cpu": 4000, "memory": 8 * GI, "gpu": 2000}
    jobs = (
        Job("a", (Task("a", "a", {"cpu": 1000, "gpu": 1000}),)),
        Job("b", (Task("b", "b", {"cpu": 1000, "gpu": 1000}),)),
        Job("c", (Task("c", "c", {"cpu": 2000}),)),
        Job("d", (Task("d", "d", {"cpu": 1000, "gpu": 1000}),)),
    )
    return Cluster((Node("node-0", alloc, alloc), Node("node-1", alloc, alloc)), jobs)


@pytest.mark.parametrize(
    ("tasks", "nodes", "error", "message"),
    [
        pytest.param([0, 1], [0], ValueError, "2 tasks but 1 nodes", id="lengths-differ"),
        pytest.param([0, 2], [0, 1], ValueError, "identical requests", id="requests-differ"),
        pytest.param([0, 0], [0, 1], SnapshotError, "task a is already placed", id="placed-twice"),
        pytest.param([0, 1, 3], [0, 0, 0], SnapshotError, "node 0 has 0 free", id="devices-run-out"),
    ],
)
def test_a_bad_allocate_many_is_refused_and_changes_nothing(
    tasks: list[int], nodes: list[int], error: type[Exception], message: str
) -> None:
    snapshot = ClusterSnapshot(_cluster())
    statement = Statement(snapshot)
    if tasks == [0, 0]:
        statement.allocate(0, 0)
    before, records = _arrays(snapshot.state), copy.copy(snapshot.state.records)
    ops = len(statement.ops)
    with pytest.raises(error, match=message):
        statement.allocate_many(tasks, nodes)
    assert _same(_arrays(snapshot.state), before)
    assert snapshot.state.records == records
    assert len(statement.ops) == ops
    assert np.array_equal(snapshot.state.task_phase, before["task_phase"])
