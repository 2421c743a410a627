"""``Statement.evict_many``: one log entry with exactly the effect of ``evict`` per task (the same arrays,
listeners and decisions), an exact undo, and task by task when a task holds what the arrays cannot say."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.core.model import Cluster, Job, Node, Task, TaskStatus
from loadmaster.core.working.eviction_run import EvictionRun
from loadmaster.core.working.statement import Statement
from tests.core.test_statement import _arrays, _same

GI = 2**30


@st.composite
def running_jobs(draw: st.DrawFn) -> tuple[Cluster, list[int]]:
    """Jobs of Running tasks of a few request shapes spread over a few nodes (some Pending ones
    between them; the first task runs), and a random subset of the Running tasks to evict (ascending)."""
    node_count = draw(st.integers(1, 4))
    alloc = {"cpu": 64_000, "memory": 64 * GI, "gpu": 8000}
    nodes = tuple(Node(f"node-{i}", alloc, alloc) for i in range(node_count))
    shapes = [{"cpu": 1000, "memory": GI}, {"cpu": 500}, {"memory": 2 * GI}, {"cpu": 250, "gpu": 250}]
    jobs = []
    for j in range(draw(st.integers(1, 4))):
        tasks = []
        for k in range(draw(st.integers(1, 5))):
            request = dict(draw(st.sampled_from(shapes)))
            if (j, k) == (0, 0) or draw(st.booleans()):  # at least one task runs
                node = f"node-{draw(st.integers(0, node_count - 1))}"
                tasks.append(Task(f"j{j}-{k}", f"j{j}", request, TaskStatus.RUNNING, node))
            else:
                tasks.append(Task(f"j{j}-{k}", f"j{j}", request))
        jobs.append(Job(f"j{j}", tuple(tasks), min_available=draw(st.integers(1, 2))))
    cluster = Cluster(nodes, tuple(jobs))
    running = ClusterSnapshot(cluster).input_running_tasks.tolist()
    chosen = sorted(draw(st.sets(st.sampled_from(running), min_size=1)))
    return cluster, chosen


def _listened(statement: Statement) -> dict[int, int]:
    heard: dict[int, int] = {}

    def listener(t: int, delta: int) -> None:  # delta tasks like t: same job and request
        for u in range(t, t + abs(delta)):
            assert statement.snapshot.task_job[u] == statement.snapshot.task_job[t]
        heard[t] = heard.get(t, 0) + delta

    statement.listeners.append(listener)
    return heard


def _by_request(snapshot: ClusterSnapshot, heard: dict[int, int]) -> dict[tuple[int, bytes], int]:
    totals: dict[tuple[int, bytes], int] = {}
    for t, delta in heard.items():
        key = (int(snapshot.task_job[t]), snapshot.task_request[:, t].tobytes())
        totals[key] = totals.get(key, 0) + delta
    return {key: delta for key, delta in totals.items() if delta}


@settings(max_examples=150)
@given(case=running_jobs())
def test_evicting_many_tasks_at_once_equals_evicting_them_one_by_one_and_undoes_exactly(
    case: tuple[Cluster, list[int]],
) -> None:
    cluster, chosen = case
    one, many = ClusterSnapshot(cluster), ClusterSnapshot(cluster)
    one_statement, many_statement = Statement(one), Statement(many)
    heard_one, heard_many = _listened(one_statement), _listened(many_statement)
    before, records_before = _arrays(many.state), copy.copy(many.state.records)
    releasing_before = many.state.releasing_count
    for t in chosen:
        one_statement.evict(t, "consolidate", "why")
    many_statement.evict_many(chosen, "consolidate", "why")

    assert _same(_arrays(many.state), _arrays(one.state))
    assert many.state.records == one.state.records
    assert many.state.releasing_count == one.state.releasing_count
    assert _by_request(many, heard_many) == _by_request(one, heard_one)
    holds_devices = any(t in records_before for t in chosen)
    batched = len(chosen) > 1 and not holds_devices
    assert isinstance(many_statement.ops[-1], EvictionRun) == batched
    assert many_statement.commit() == one_statement.commit()

    again = ClusterSnapshot(cluster)
    statement = Statement(again)
    statement.evict_many(chosen, "consolidate", "why")
    statement.rollback(0)
    assert _same(_arrays(again.state), before)
    assert again.state.records == records_before
    assert again.state.releasing_count == releasing_before


def test_tasks_evicted_together_and_one_moved_back_commit_an_evict_and_no_decision_for_it() -> None:
    alloc = {"cpu": 4000, "memory": 8 * GI}
    nodes = (Node("node-0", alloc, alloc), Node("node-1", alloc, alloc))
    tasks = tuple(Task(f"a-{k}", "a", {"cpu": 1000}, TaskStatus.RUNNING, f"node-{k}") for k in range(2))
    snapshot = ClusterSnapshot(Cluster(nodes, (Job("a", tasks),)))
    statement = Statement(snapshot)
    statement.evict_many([0, 1], "consolidate", "room")
    statement.pipeline(0, 0, "consolidate", "room")  # back on its own node: it keeps running there
    statement.pipeline(1, 0, "consolidate", "room")  # to the other node: a move
    decisions = statement.commit()
    assert [(d.kind, d.task, d.node, d.from_node) for d in decisions] == [("move", "a-1", "node-0", "node-1")]
