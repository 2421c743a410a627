"""Decisions: what one committed statement changes, as the net effect per task.

kinds: ``bind`` (placed on idle resources), ``pipeline`` (placed; starts once releasing resources are
free), ``evict`` (a Running task is stopped), ``move`` (a Running task is evicted and placed elsewhere).
An eviction undone in the same statement (the task was re-placed on its own node) yields nothing.

A run of tasks bound by one batched operation arrives as one ``BindRun``: no other operation of a
statement touches those tasks (they were Pending, and a bound task that was not Running in the input can
be neither evicted nor placed again), so each simply gets a bind, without a per-task operation object.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from loadmaster.core.columns.snapshot import ClusterSnapshot

DecisionKind = Literal["bind", "pipeline", "evict", "move"]


class Operation(Protocol):
    """What a decision reads of one logged operation (``statement.Operation``): declared here, so the
    statement, which turns its log into decisions, is the only one of the two that imports the other."""

    @property
    def kind(self) -> str: ...  # allocate | pipeline | evict | unevict

    @property
    def task(self) -> int: ...

    @property
    def node(self) -> int: ...

    @property
    def action(self) -> str: ...

    @property
    def reason(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Decision:
    action: str
    kind: DecisionKind
    task: str
    node: str
    from_node: str | None = None  # for moves
    reason: str = ""

    def to_json(self) -> dict[str, str]:
        out = {"action": self.action, "kind": self.kind, "task": self.task, "node": self.node}
        if self.from_node is not None:
            out["from_node"] = self.from_node
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True, slots=True)
class BindRun:
    action: str
    reason: str
    tasks: list[int]
    nodes: list[int]


def decisions_from_ops(
    snapshot: ClusterSnapshot, ops: Sequence[Operation | BindRun], reason: str | None = None
) -> list[Decision]:
    """The net decision per task, in order of each task's first operation; ``reason`` (when given)
    replaces every operation's own."""
    by_task: dict[int, Decision] = {}
    order: list[int] = []
    names, tasks = snapshot.node_names, snapshot.tasks
    for op in ops:
        why = op.reason if reason is None else reason
        if isinstance(op, BindRun):
            for t, n in zip(op.tasks, op.nodes, strict=True):
                if t not in by_task:
                    order.append(t)
                by_task[t] = Decision(op.action, "bind", tasks[t].name, names[n], None, why)
            continue
        task, node = tasks[op.task].name, names[op.node]
        earlier = by_task.get(op.task)
        if op.task not in by_task:
            order.append(op.task)
        if op.kind == "unevict":
            by_task.pop(op.task, None)
            order.remove(op.task)
        elif op.kind == "evict":
            by_task[op.task] = Decision(op.action, "evict", task, node, reason=why)
        elif earlier is not None and earlier.kind == "evict":
            by_task[op.task] = Decision(op.action, "move", task, node, from_node=earlier.node, reason=why)
        else:
            kind: DecisionKind = "bind" if op.kind == "allocate" else "pipeline"
            by_task[op.task] = Decision(op.action, kind, task, node, reason=why)
    return [by_task[t] for t in order]
