"""Decisions of a statement that holds batched binds: one bind per task, in operation order, merged with
the single operations around them, and a commit reason given to every decision."""

from __future__ import annotations

import pytest

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.core.model import Cluster, Job, Node, Task, TaskStatus
from loadmaster.core.working.decisions import Decision
from loadmaster.core.working.statement import Statement

GI = 2**30


def _statement() -> tuple[ClusterSnapshot, Statement]:
    alloc = {"cpu": 8000, "memory": 32 * GI}
    nodes = tuple(Node(f"node-{i}", alloc, alloc) for i in range(3))
    old = Job("old", (Task("old", "old", {"cpu": 1000}, TaskStatus.RUNNING, "node-0"),))
    gang = Job("gang", tuple(Task(f"gang-{k}", "gang", {"cpu": 1000, "memory": GI}) for k in range(3)))
    solo = Job("solo", (Task("solo", "solo", {"cpu": 1000, "memory": GI}),))
    snapshot = ClusterSnapshot(Cluster(nodes, (old, gang, solo)))
    return snapshot, Statement(snapshot)


def _run(statement: Statement, snapshot: ClusterSnapshot) -> None:
    t = snapshot.task_index
    statement.evict(t["old"], "preempt", "evicted")
    statement.allocate_many([t["gang-0"], t["gang-1"], t["gang-2"]], [1, 2, 1], "allocate", "batch")
    statement.pipeline(t["old"], 2, "preempt", "moved")
    statement.allocate(t["solo"], 0, "allocate", "single")


@pytest.mark.parametrize(
    ("reason", "expected_reasons"),
    [
        pytest.param(None, ["moved", "batch", "batch", "batch", "single"], id="each-operation-keeps-its-own"),
        pytest.param("why", ["why"] * 5, id="the-commit-reason-replaces-every-one"),
    ],
)
def test_batched_binds_sit_in_operation_order_between_single_decisions(
    reason: str | None, expected_reasons: list[str]
) -> None:
    snapshot, statement = _statement()
    _run(statement, snapshot)
    decisions = statement.commit(reason)
    assert [(d.kind, d.task, d.node, d.from_node) for d in decisions] == [
        ("move", "old", "node-2", "node-0"),
        ("bind", "gang-0", "node-1", None),
        ("bind", "gang-1", "node-2", None),
        ("bind", "gang-2", "node-1", None),
        ("bind", "solo", "node-0", None),
    ]
    assert [d.reason for d in decisions] == expected_reasons
    assert statement.ops == []


def test_batched_binds_give_the_same_decisions_as_one_allocate_per_task() -> None:
    snapshot, batched = _statement()
    gang = [snapshot.task_index[f"gang-{k}"] for k in range(3)]
    batched.allocate_many(gang, [0, 1, 1], "allocate", "r")
    _, single = _statement()
    for t, n in zip(gang, (0, 1, 1), strict=True):
        single.allocate(t, n, "allocate", "r")
    expected = [
        Decision("allocate", "bind", f"gang-{k}", n, None, "r")
        for k, n in enumerate(["node-0", "node-1", "node-1"])
    ]
    assert batched.commit() == single.commit() == expected
