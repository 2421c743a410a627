"""Gang bookkeeping shared by the actions: which tasks of a job are active, and which to place next."""

from __future__ import annotations

import numpy as np

from loadmaster.core.snapshot import BOUND, PENDING, PIPELINED
from loadmaster.session import Session


def active_count(session: Session, j: int) -> int:
    """Tasks of job j that are bound, running or pipelined."""
    members = np.array(session.snapshot.job_tasks[j], dtype=np.int64)
    if members.size == 0:
        return 0
    phase = session.snapshot.state.task_phase[members]
    return int(((phase == BOUND) | (phase == PIPELINED)).sum())


def pending_tasks(session: Session, j: int) -> list[int]:
    phase = session.snapshot.state.task_phase
    return [t for t in session.snapshot.job_tasks[j] if phase[t] == PENDING]


def tasks_to_allocate(session: Session, j: int, skip: frozenset[int] | set[int] = frozenset()) -> list[int]:
    """KAI's rule: the tasks that bring the job up to min_available (all or nothing), or, once the gang
    is satisfied, exactly one more (elastic extras compete one at a time). ``skip``: extras that found
    no node in this action (the job's other tasks may still fit: they are tried next)."""
    job = session.snapshot.jobs[j]
    pending = [t for t in pending_tasks(session, j) if t not in skip]
    missing = job.min_available - active_count(session, j)
    return pending[:missing] if missing > 0 else pending[:1]
