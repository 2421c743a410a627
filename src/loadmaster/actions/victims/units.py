"""Victims: units, the disruption order, scenarios S(V; t1..ti) and the eviction ratio.

Definitions (scenario spec, "Victims"):

* **Unit** (evicted together): a whole job, i.e. all its Running tasks; a job running more than
  ``min_available`` tasks also offers each task above ``min_available`` as a unit of its own.
  Importance: higher priority first, then older (list order); within a job the whole-job unit ranks
  above its task units, and a later task is newer.
* **Disruption order** of two victim sets: compare their unit priorities listed from highest to
  lowest, element by element (the lower value is less disruptive; a prefix is less disruptive than the
  longer list); on equal lists, list the units most important first and at the first difference the
  set whose unit is newer is less disruptive.
* **Eviction ratio**: ``share(X) = max_r sum_{x in X} request_r(x) / A_r`` over resources with
  ``A_r > 0`` (A = allocatable of Ready nodes); ``ratio = share(Evicted or Moved tasks of V) /
  share(t1..tk)``; a scenario is valid only if ``ratio <= config.max_eviction_ratio``.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from loadmaster.core.columns.snapshot import BOUND, PIPELINED
from loadmaster.session import IntArray, Session

MANY_TASKS = 64  # beyond this many tasks, a union of units is taken as a vector


class Unit(NamedTuple):
    """A named tuple rather than a frozen dataclass: a search makes thousands of task units a cycle on
    alibaba-2017 (``JobUnits.on``), and a tuple is made in a third of the time."""

    job: int
    tasks: tuple[int, ...]
    priority: int
    sub: int  # 0 for the whole-job unit, 1.. for its task units (later = newer)
    nodes: frozenset[int]

    @property
    def importance(self) -> tuple[int, int, int]:
        """Sort key, most important first: higher priority, older job, whole job before its tasks."""
        return (-self.priority, self.job, self.sub)

    @property
    def newness(self) -> tuple[int, int]:
        """Smaller = newer (less disruptive to evict, at equal priority)."""
        return (-self.job, -self.sub)

    @property
    def solo_key(self) -> DisruptionKey:
        """``disruption_key([self])``: the least disruptive set a node holding this unit could offer."""
        return solo_key(self.priority, self.job, self.sub)


DisruptionKey = tuple[tuple[int, ...], tuple[tuple[int, int], ...]]


def solo_key(priority: int, job: int, sub: int) -> DisruptionKey:
    """``disruption_key`` of the one unit (job, sub) of a job of this priority, without the unit. A set
    holding a unit is never less disruptive than that unit alone: its highest priority is at least the
    unit's, and a longer list with the same head sorts after it."""
    return (priority,), ((-job, -sub),)


def disruption_key(units: Sequence[Unit]) -> DisruptionKey:
    """Smaller = less disruptive. Tuples compare element by element and a prefix sorts first, which
    is exactly the spec's order on the priority lists."""
    priorities = tuple(sorted((u.priority for u in units), reverse=True))
    return priorities, tuple(u.newness for u in sorted(units, key=lambda u: u.importance))


def units_of_job(session: Session, j: int) -> list[Unit]:
    """The units job j offers now: its Running tasks (evicted ones are no longer offered).

    A job that got tasks placed or moved earlier in this cycle offers nothing in the same cycle:
    evicting what the cycle has just decided would be churn, and taking only its Running tasks would
    leave its new ones behind, splitting a gang.
    """
    return JobUnits.of(session, j).all()


class JobUnits:
    """The units job j offers now (``units_of_job``), its task units made node by node when asked for.

    A victim search asks the units on a few nodes (``VictimIndex.on``); a job running thousands of tasks
    (alibaba-2017's) offers one task unit per task above ``min_available``, so making them all for every
    job on an asked node cost more than the searches. The whole-job unit is made at once (every node's
    offer holds it); a task unit is made when its node is asked for, once; ``all`` makes every unit, in
    the order of ``units_of_job``."""

    __slots__ = ("_all", "_by_node", "_extra_nodes", "_extras", "_job", "_on", "_priority", "whole")

    def __init__(
        self, j: int, priority: int, min_available: int, running: list[int], nodes: list[int]
    ) -> None:
        self._job, self._priority = j, priority
        self.whole = Unit(j, tuple(running), priority, 0, frozenset(nodes)) if running else None
        self._extras = running[min_available:]  # task unit k (sub k) holds ``_extras[k - 1]``
        self._extra_nodes = nodes[min_available:]
        self._by_node: tuple[IntArray, IntArray] | None = None  # (task units' nodes ascending, their subs)
        self._on: dict[int, list[Unit]] = {}  # node -> its units, made when asked for
        self._all: list[Unit] | None = None

    @classmethod
    def of(cls, session: Session, j: int) -> JobUnits:
        snapshot = session.snapshot
        members = snapshot.job_tasks[j]  # a range: the job's tasks are contiguous
        priority, min_available = snapshot.jobs[j].priority, snapshot.jobs[j].min_available
        if len(members) <= MANY_TASKS:  # task by task: numpy's per-call cost beats a few Python steps
            phase, running_in_input = snapshot.state.task_phase, snapshot.input_running_mask
            if any(phase[t] == PIPELINED or (phase[t] == BOUND and not running_in_input[t]) for t in members):
                return cls(j, priority, min_available, [], [])
            running = [t for t in members if running_in_input[t] and phase[t] == BOUND]
            nodes = [int(snapshot.state.task_node[t]) for t in running]
            return cls(j, priority, min_available, running, nodes)
        # a large job (alibaba's run to thousands of tasks) as slices
        phase = snapshot.state.task_phase[members.start : members.stop]
        bound = phase == BOUND
        ran = snapshot.input_running_mask[members.start : members.stop]
        if bool((phase == PIPELINED).any()) or bool((bound & ~ran).any()):
            return cls(j, priority, min_available, [], [])
        held = np.flatnonzero(bound & ran) + members.start
        return cls(j, priority, min_available, held.tolist(), snapshot.state.task_node[held].tolist())

    def _task_unit(self, k: int) -> Unit:
        return Unit(
            self._job, (self._extras[k - 1],), self._priority, k, frozenset((self._extra_nodes[k - 1],))
        )

    def sub_of(self, task: int) -> int:
        """The sub of the task unit holding ``task`` (one of the job's units' tasks), 0 when only the
        whole-job unit holds it (one of the first ``min_available``)."""
        k = bisect.bisect_left(self._extras, task)
        return k + 1 if k < len(self._extras) and self._extras[k] == task else 0

    def all(self) -> list[Unit]:
        """Every unit: the whole job first, then its task units in order (newer last)."""
        if self._all is None:
            extras = range(1, len(self._extras) + 1)
            self._all = [self.whole, *map(self._task_unit, extras)] if self.whole is not None else []
        return self._all

    def on(self, n: int) -> list[Unit]:
        """The units with a task on node n, in ``sub`` order."""
        if self.whole is None or n not in self.whole.nodes:
            return []
        found = self._on.get(n)
        if found is None:
            subs = self._subs_on(n)
            made = self._all
            task_units = [made[k] for k in subs] if made is not None else [self._task_unit(k) for k in subs]
            found = self._on[n] = [self.whole, *task_units]
        return found

    def _subs_on(self, n: int) -> list[int]:
        """The subs of the task units on node n, ascending: a scan for a few, a sorted index for many."""
        if len(self._extras) <= MANY_TASKS:
            return [k for k, m in enumerate(self._extra_nodes, start=1) if m == n]
        if self._by_node is None:
            nodes = np.asarray(self._extra_nodes, dtype=np.int64)
            order = np.argsort(nodes, kind="stable")
            self._by_node = (nodes[order], order + 1)
        nodes, subs = self._by_node
        start, stop = np.searchsorted(nodes, (n, n + 1))
        found: list[int] = subs[start:stop].tolist()
        return found


def tasks_of(units: Sequence[Unit]) -> list[int]:
    """The units' tasks, distinct and ascending (a whole-job unit may hold hundreds: then as a vector)."""
    if sum(len(unit.tasks) for unit in units) > MANY_TASKS:
        tasks: list[int] = np.unique(np.concatenate([unit.tasks for unit in units])).tolist()
        return tasks
    return sorted({t for unit in units for t in unit.tasks})


def share(session: Session, tasks: Sequence[int], ready_allocatable: IntArray) -> float:
    """Dominant share of a task set over the allocatable of Ready nodes."""
    if not tasks:
        return 0.0
    total = session.snapshot.task_request[:, list(tasks)].sum(axis=1)
    present = ready_allocatable > 0
    return float((total[present] / ready_allocatable[present]).max(initial=0.0))


class DominantShare:
    """``share`` as a callable for one action: the rows with ``A_r > 0`` and their A_r found once
    (node readiness never changes within a cycle). For a few tasks the sums run on Python ints: the
    same floats as numpy's, since every value is below 2**53 (exact as a float) and both divisions
    are correctly rounded."""

    FEW = 8

    def __init__(self, session: Session) -> None:
        allocatable = ready_allocatable(session)
        self.rows = np.flatnonzero(allocatable > 0)
        self.allocatable = allocatable[self.rows]
        self.request = session.snapshot.task_request[self.rows]
        self.exact_in_python = bool(self.request.size == 0 or int(self.request.max()) < 2**53 // self.FEW)
        self.denominators: list[int] = self.allocatable.tolist()

    def __call__(self, tasks: Sequence[int]) -> float:
        if not tasks:
            return 0.0
        if len(tasks) <= self.FEW and self.exact_in_python:
            columns: list[list[int]] = self.request[:, list(tasks)].tolist()
            return max([0.0, *(sum(c) / a for c, a in zip(columns, self.denominators, strict=True))])
        total = self.request[:, list(tasks)].sum(axis=1)
        return float((total / self.allocatable).max(initial=0.0))


def ready_allocatable(session: Session) -> IntArray:
    snapshot = session.snapshot
    return np.asarray((snapshot.node_alloc * snapshot.node_ready[None, :]).sum(axis=1), dtype=np.int64)
