"""Gang bookkeeping shared by the actions: which tasks of a job are active, and which to place next."""

from __future__ import annotations

import numpy as np

from loadmaster.core.columns.snapshot import BOUND, PENDING, PIPELINED
from loadmaster.session import IntArray, Session

ACTIVE = (BOUND, PIPELINED)


def _phases(session: Session, j: int) -> tuple[int, np.ndarray]:
    """(index of the job's first task, the phases of its tasks): a view, since a job's tasks are
    contiguous in the snapshot, so these checks cost one vector operation, not a Python loop."""
    tasks = session.snapshot.job_tasks[j]
    first = tasks[0] if tasks else 0
    return first, session.snapshot.state.task_phase[first : first + len(tasks)]


def active_count(session: Session, j: int) -> int:
    """Tasks of job j that are bound, running or pipelined."""
    tasks = session.snapshot.job_tasks[j]
    if len(tasks) == 1:  # most jobs: a scalar check costs a tenth of the vector one
        return int(session.snapshot.state.task_phase[tasks[0]] in ACTIVE)
    _, phase = _phases(session, j)
    return int(np.count_nonzero((phase == BOUND) | (phase == PIPELINED)))


def active_on_ready_nodes(session: Session, j: int) -> int:
    """Tasks of job j that are active on a Ready node: a task on a NotReady node runs nothing anyone can
    see, so it does not keep its gang from being stale (the timeline spec's "Stale gangs")."""
    first, phase = _phases(session, j)
    active = (phase == BOUND) | (phase == PIPELINED)
    if not active.any():
        return 0
    nodes = session.snapshot.state.task_node[first : first + len(phase)][active]
    return int(np.count_nonzero(session.snapshot.node_ready[nodes]))


def jobs_with_pending_tasks(session: Session) -> IntArray:
    """The jobs with at least one Pending task, ascending: one vector pass, so that the actions spend no
    Python step on the (typically many) jobs that are fully running and have nothing to place.

    Tasks are stored job by job, so ``task_job`` is non-decreasing and so are its Pending entries: the
    distinct jobs are where a run starts (no sort, unlike ``np.unique``; a backlog of 10^5 Pending
    tasks is read four times a cycle)."""
    snapshot = session.snapshot
    jobs = snapshot.task_job[snapshot.state.task_phase == PENDING]
    starts = np.empty(jobs.size, dtype=np.bool_)
    starts[:1] = True
    np.not_equal(jobs[1:], jobs[:-1], out=starts[1:])
    waiting: IntArray = jobs[starts].astype(np.int64)
    return waiting


def pending_tasks(session: Session, j: int) -> list[int]:
    """Job j's Pending tasks, ascending."""
    tasks = session.snapshot.job_tasks[j]
    if len(tasks) == 1:
        return [tasks[0]] if session.snapshot.state.task_phase[tasks[0]] == PENDING else []
    first, phase = _phases(session, j)
    pending: list[int] = (np.flatnonzero(phase == PENDING) + first).tolist()
    return pending


def tasks_to_allocate(session: Session, j: int, skip: frozenset[int] | set[int] = frozenset()) -> list[int]:
    """KAI's rule: the tasks that bring the job up to min_available (all or nothing), or, once the gang
    is satisfied, exactly one more (elastic extras compete one at a time). ``skip``: extras that found
    no node in this action (the job's other tasks may still fit: they are tried next).

    A gang short of more members than it has Pending (one of its tasks was evicted earlier in this
    cycle, so it is Releasing, neither active nor Pending) gets nothing: placing the rest would leave it
    below min_available, which is never a valid state. It is tried again next cycle, whole."""
    tasks = session.snapshot.job_tasks[j]
    min_available = session.snapshot.jobs[j].min_available
    if len(tasks) > 1 and not skip:
        # One pass over the job's phases (a backlog's gangs are asked about by every action of every
        # cycle): when every task is Pending, none is active and the answer is the job's first tasks.
        first, phase = _phases(session, j)
        pending_mask = phase == PENDING
        n_pending = int(np.count_nonzero(pending_mask))
        if n_pending == 0:
            return []
        all_pending = n_pending == len(tasks)
        active = 0 if all_pending else int(np.count_nonzero((phase == BOUND) | (phase == PIPELINED)))
        missing = min_available - active
        wanted = missing if missing > 0 else 1
        if n_pending < wanted:
            return []
        if all_pending:
            return list(range(first, first + wanted))
        pending_first: list[int] = (np.flatnonzero(pending_mask)[:wanted] + first).tolist()
        return pending_first
    missing = min_available - active_count(session, j)
    wanted = missing if missing > 0 else 1
    pending = pending_tasks(session, j)
    if skip:
        pending = [t for t in pending if t not in skip]
    if len(pending) < wanted and missing > 0:
        return []
    return pending[:wanted]
