"""run_cycle: the core's one entry point. Pure: the same cluster, config and ``now`` give the same plan.

It opens a Session on a fresh snapshot, runs the configured actions in order, and turns the final
working state into a ``CyclePlan``: every task's status and node, the decisions, and an explanation
for every task left Pending.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from loadmaster.actions.allocate import allocate
from loadmaster.actions.base import Action
from loadmaster.actions.consolidate import consolidate
from loadmaster.actions.preempt import preempt
from loadmaster.actions.reclaim import reclaim
from loadmaster.actions.stale_gang_eviction import stale_gang_eviction
from loadmaster.core.columns.snapshot import (
    BOUND,
    PENDING,
    PIPELINED,
    RELEASING,
    ClusterSnapshot,
    SnapshotCache,
    TaskRecord,
)
from loadmaster.core.model import Cluster, TaskStatus
from loadmaster.core.search_backoff import SearchOutcome
from loadmaster.core.working.decisions import Decision
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
    tasks: Mapping[str, TaskOutcome]  # every task, by name (TaskOutcomes: made when read)
    decisions: list[Decision]
    explanations: Mapping[str, Explanation]  # every task left Pending (PendingExplanations)
    queues: dict[str, dict[str, Any]] = field(default_factory=dict)  # per queue: shares and usage
    # The working state as the cycle left it, for read-only views of the result (GPU telemetry).
    snapshot: ClusterSnapshot | None = None
    # The victim searches the evicting actions ran, in order (the control plane's failed-search backoff).
    searches: tuple[SearchOutcome, ...] = ()


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


class TaskOutcomes(Mapping[str, TaskOutcome]):
    """Every task's outcome by name, each made when first asked for. The control plane reads only the
    tasks it attempted; making an outcome for every Running task would cost each cycle a Python step
    per task in the cluster. Read once the cycle is over: the session no longer changes then."""

    def __init__(self, session: Session) -> None:
        self._snapshot = session.snapshot

    def __getitem__(self, name: str) -> TaskOutcome:
        snapshot = self._snapshot
        t = snapshot.task_index[name]
        was_running = snapshot.tasks[t].status == TaskStatus.RUNNING
        return _outcome(snapshot.record_of(t), was_running, snapshot.node_names)

    def __iter__(self) -> Iterator[str]:
        return (task.name for task in self._snapshot.tasks)

    def __len__(self) -> int:
        return self._snapshot.n_tasks

    def __contains__(self, name: object) -> bool:
        return name in self._snapshot.task_index


class PendingExplanations(Mapping[str, Explanation]):
    """An explanation for every task left Pending, by name, each made when first asked for. A
    replay reads none and the control plane only those of the tasks it attempted, while explaining
    one costs a pass over every node: made eagerly, a backlog of Pending gangs would cost every cycle
    a node pass per gang. An explanation depends on the task's class alone; the action's reason is
    set on a copy, so tasks of one class with the same reason share one (``explain`` runs once per
    class). Read once the cycle is over, as ``TaskOutcomes``."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._by_class: dict[int, Explanation] = {}
        self._by_reason: dict[tuple[Hashable, str], Explanation] = {}

    def _pending(self, name: object) -> int | None:
        snapshot = self._session.snapshot
        t = snapshot.task_index.get(name) if isinstance(name, str) else None
        return t if t is not None and snapshot.state.task_phase[t] == PENDING else None

    def __getitem__(self, name: str) -> Explanation:
        t = self._pending(name)
        if t is None:
            raise KeyError(name)
        session = self._session
        reason = session.reason_of(t)
        cls = session.engine.class_of(t)
        found = self._by_reason.get((cls, reason))
        if found is None:
            base = self._by_class.get(cls)
            if base is None:
                base = self._by_class[cls] = explain(session.engine, t)
            found = self._by_reason[cls, reason] = dataclasses.replace(base, reason=reason)
        return found

    def __iter__(self) -> Iterator[str]:
        snapshot = self._session.snapshot
        return (snapshot.tasks[t].name for t in np.flatnonzero(snapshot.state.task_phase == PENDING).tolist())

    def __len__(self) -> int:
        return int(np.count_nonzero(self._session.snapshot.state.task_phase == PENDING))

    def __contains__(self, name: object) -> bool:
        return self._pending(name) is not None


def run_cycle(cluster: Cluster, now_s: float = 0.0, cache: SnapshotCache | None = None) -> CyclePlan:
    """One cycle over ``cluster`` at ``now_s``. ``cache`` (the control plane keeps one) lets the snapshot
    reuse what the previous cycle built for the nodes and jobs both share; the plan is the same without."""
    unknown = [name for name in cluster.config.actions if name not in ACTIONS]
    if unknown:
        raise ValueError(f"config.actions: unknown action {', '.join(unknown)} (known: {', '.join(ACTIONS)})")
    session = Session.open(cluster, now_s, cache)
    for name in cluster.config.actions:
        ACTIONS[name](session)
    queues = session.queues
    report = queues_report(queues.tree, queues.fair_share, queues.usage, queues.demand)
    jobs = session.snapshot.jobs
    searches = tuple(SearchOutcome(action, jobs[j].name, found) for action, j, found in session.searches)
    return CyclePlan(
        TaskOutcomes(session),
        session.decisions,
        PendingExplanations(session),
        report,
        session.snapshot,
        searches,
    )
