"""run_cycle: the core's one entry point. Pure: the same cluster, config and ``now`` give the same plan.

It opens a Session on a fresh snapshot, runs the configured actions in order, and turns the final
working state into a ``CyclePlan``: every task's status and node, the decisions, and an explanation
for every task left Pending.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from loadmaster.actions.allocate import allocate
from loadmaster.actions.base import Action
from loadmaster.actions.consolidate import consolidate
from loadmaster.actions.preempt import preempt
from loadmaster.actions.reclaim import reclaim
from loadmaster.actions.stale_gang_eviction import stale_gang_eviction
from loadmaster.core.decisions import Decision
from loadmaster.core.model import Cluster, TaskStatus
from loadmaster.core.snapshot import BOUND, PENDING, PIPELINED, RELEASING, TaskRecord
from loadmaster.placement.diagnosis import Explanation, explain
from loadmaster.queues.report import queues_report
from loadmaster.session import Session

ACTIONS: dict[str, Action] = {
    "allocate": allocate,
    "consolidate": consolidate,
    "reclaim": reclaim,
    "preempt": preempt,
    "stale_gang_eviction": stale_gang_eviction,
}


@dataclass(frozen=True, slots=True)
class TaskOutcome:
    status: str
    node: str | None
    devices: tuple[int, ...] = ()


@dataclass(slots=True)
class CyclePlan:
    tasks: dict[str, TaskOutcome]
    decisions: list[Decision]
    explanations: dict[str, Explanation]
    queues: dict[str, dict[str, Any]] = field(default_factory=dict)  # per queue: shares and usage


def _outcome(record: TaskRecord, was_running: bool, node_names: Sequence[str]) -> TaskOutcome:
    if record.phase == PENDING:
        return TaskOutcome(TaskStatus.PENDING.value, None)
    node = node_names[record.node]
    if record.phase == BOUND:
        return TaskOutcome(TaskStatus.RUNNING.value, node, record.devices)
    if record.phase == PIPELINED:
        # back on its own node (on other GPU devices) is not a move: it stays Running there
        if was_running and record.release_node == record.node:
            return TaskOutcome(TaskStatus.RUNNING.value, node, record.devices)
        status = TaskStatus.MOVED if was_running else TaskStatus.PIPELINED
        return TaskOutcome(status.value, node, record.devices)
    assert record.phase == RELEASING
    status = TaskStatus.EVICTED if was_running else TaskStatus.RELEASING
    return TaskOutcome(status.value, node, record.devices)


def _outcomes(session: Session) -> dict[str, TaskOutcome]:
    """Every task's outcome. An outcome depends only on what the key below holds and is immutable, so
    tasks with equal keys (most tasks of a node) share one: 60,000 tasks cost a few thousand objects."""
    snapshot = session.snapshot
    shared: dict[tuple[int, int, int, tuple[int, ...], bool], TaskOutcome] = {}
    outcomes = {}
    for t, task in enumerate(snapshot.tasks):
        record = snapshot.record_of(t)
        was_running = task.status == TaskStatus.RUNNING
        key = (record.phase, record.node, record.release_node, record.devices, was_running)
        outcome = shared.get(key)
        if outcome is None:
            outcome = shared[key] = _outcome(record, was_running, snapshot.node_names)
        outcomes[task.name] = outcome
    return outcomes


def _explanations(session: Session, outcomes: dict[str, TaskOutcome]) -> dict[str, Explanation]:
    snapshot = session.snapshot
    by_class: dict[Hashable, Explanation] = {}
    explanations = {}
    for t, task in enumerate(snapshot.tasks):
        if outcomes[task.name].status != TaskStatus.PENDING.value:
            continue
        reason = session.pending_reasons.get(t, "")
        key = (session.engine.class_of(t), reason)
        if key not in by_class:
            explanation = explain(session.engine, t)
            explanation.reason = reason
            by_class[key] = explanation
        explanations[task.name] = by_class[key]
    return explanations


def run_cycle(cluster: Cluster, now_s: float = 0.0) -> CyclePlan:
    unknown = [name for name in cluster.config.actions if name not in ACTIONS]
    if unknown:
        raise ValueError(f"config.actions: unknown action {', '.join(unknown)} (known: {', '.join(ACTIONS)})")
    session = Session.open(cluster, now_s)
    for name in cluster.config.actions:
        ACTIONS[name](session)
    outcomes = _outcomes(session)
    queues = session.queues
    report = queues_report(queues.tree, queues.fair_share, queues.usage, queues.demand)
    return CyclePlan(outcomes, session.decisions, _explanations(session, outcomes), report)
