"""allocate: place pending jobs without evicting anything.

Jobs come in queue order (job_queue.py). Each gets the tasks that bring it up to ``min_available``, all
or nothing, then its elastic extras one at a time (pushed back to compete again). A job whose queue
(or an ancestor) would exceed a limit, or whose non-preemptible usage would exceed deserved, gets
nothing, with that reason. A task that fits only on resources being released is pipelined (and then its
whole gang is).

When only one queue has pending work, runs of consecutive single-task jobs whose tasks are identical
(same equivalence class) are placed by one ``choose_many`` call, capped by the queue's remaining
quota: the same result as one job at a time (each job gets its own task, in order; once one finds no
node none of the rest can, since allocate only fills nodes), at a fraction of the cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import filterfalse

import numpy as np

from loadmaster.actions.backfill_depth import DepthBudget
from loadmaster.actions.gang import active_count, jobs_with_pending_tasks, pending_tasks
from loadmaster.actions.job_queue import PendingJobs
from loadmaster.actions.no_room import NoRoomMemo
from loadmaster.actions.placing import place_all
from loadmaster.actions.quota import copies_within_quota, quota_refusal
from loadmaster.core.columns.snapshot import PENDING
from loadmaster.placement.engine import Choice
from loadmaster.placement.extension_points import IntArray
from loadmaster.queues.ordering import job_order_key
from loadmaster.session import Session

NAME = "allocate"


def _single_task(session: Session, j: int) -> int | None:
    """The one pending task of a job that needs exactly one task placed and has nothing else pending."""
    job, members = session.snapshot.jobs[j], session.snapshot.job_tasks[j]
    if len(members) == 1:  # the common case, without building lists
        t = members[0]
        return t if job.min_available == 1 and session.snapshot.state.task_phase[t] == PENDING else None
    pending = pending_tasks(session, j)
    if job.min_available == 1 and len(pending) == 1 and active_count(session, j) == 0:
        return pending[0]
    return None


def _collect_run(
    session: Session, pending: PendingJobs, first_job: int, first_task: int, limit: int | None
) -> list[int]:
    """Pop the following jobs of the same leaf while they are single-task jobs of the same class (at most
    ``limit`` jobs in all, when given)."""
    leaf = int(session.queues.job_leaf[first_job])
    wanted = session.engine.class_of(first_task)
    run = [first_task]
    cap = copies_within_quota(session, first_job, session.snapshot.task_request[:, first_task])
    if limit is not None:
        cap = min(cap, limit)
    while len(run) < cap:
        j = pending.peek_same_leaf(leaf)
        single = None if j is None else _single_task(session, j)
        if single is None or session.engine.class_of(single) != wanted:
            break
        pending.pop()
        run.append(single)
    return run


def _place_run(session: Session, run: list[int]) -> None:
    statement = session.statement

    def apply(t: int, choice: Choice) -> bool:
        if not choice.placed:
            return False
        if choice.fits_idle:
            statement.allocate(t, choice.node, NAME)
        else:
            statement.pipeline(t, choice.node, NAME)
        return True

    def apply_run(tasks: Sequence[int], nodes: IntArray) -> None:
        statement.allocate_many(tasks, nodes, NAME)

    session.engine.choose_many(run, apply, apply_run)
    session.commit()


def _try_job(session: Session, pending: PendingJobs, no_room: NoRoomMemo, j: int) -> None:
    job = session.snapshot.jobs[j]
    tasks = pending.tasks_of(session, j)
    refusal = quota_refusal(session, j, tasks)
    if refusal is not None:
        for t in tasks:
            session.pending_reasons[t] = refusal
        return
    unplaced = no_room.unplaced(tasks)
    if unplaced is None:
        unplaced = place_all(session, tasks, NAME)
        if unplaced:
            no_room.note(tasks, unplaced)
    if unplaced and len(tasks) == 1:
        # One task was needed (an elastic extra, or the last one a gang lacks): the job's other
        # pending tasks may differ (tolerations, requests), so the next one gets its turn.
        pending.failed_extras.add(tasks[0])
        pending.push(j)
        return
    if unplaced:
        if len(tasks) > 1:
            reason = (
                f"gang {job.name} needs {len(tasks)} more tasks placed together "
                f"(min_available {job.min_available}); only {len(tasks) - len(unplaced)} fit"
            )
            for t in tasks:
                session.pending_reasons[t] = reason
        return
    session.commit()
    pending.push(j)  # elastic extras compete again, one at a time


def _extras_cannot_be_overtaken(session: Session, pending: PendingJobs, j: int) -> bool:
    """An elastic job above its minimum whose key no other pending job beats: it would get every one
    of its extras in a row anyway, so they can be placed as runs (one evaluation per run)."""
    job = session.snapshot.jobs[j]
    if not pending.only_leaf() or active_count(session, j) < job.min_available:
        return False
    rival = pending.peek_key(int(session.queues.job_leaf[j]))
    above_min = job_order_key(job, job.min_available + 1, j)
    return rival is None or above_min < rival


def _place_extras(session: Session, pending: PendingJobs, j: int) -> None:
    extras = pending_tasks(session, j)
    if pending.failed_extras:
        extras = list(filterfalse(pending.failed_extras.__contains__, extras))
    phase = session.snapshot.state.task_phase
    for group in session.engine.class_groups(j, extras):
        run = group[: copies_within_quota(session, j, session.snapshot.task_request[:, group[0]])]
        if not run:
            continue
        _place_run(session, run)
        # identical tasks: once one finds no node, the rest of its run cannot either
        placed = np.asarray(run, dtype=np.int64)
        pending.failed_extras.update(placed[phase[placed] == PENDING].tolist())


def allocate(session: Session) -> None:
    pending = PendingJobs(session, jobs_with_pending_tasks(session))
    no_room = NoRoomMemo(session)
    budget = DepthBudget(session.snapshot.config.backfill_depth)
    phase = session.snapshot.state.task_phase
    while not budget.exhausted() and (j := pending.pop()) is not None:
        single = _single_task(session, j) if pending.only_leaf() else None
        if single is not None and copies_within_quota(session, j, session.snapshot.task_request[:, single]):
            run = _collect_run(session, pending, j, single, budget.left())
            _place_run(session, run)
            # a run stops at its first task that finds no node: every later one finds none either
            missed = [i for i, t in enumerate(run) if phase[t] == PENDING]
            budget.count(len(run), missed[0] if missed else None)
            continue
        before = len(session.decisions)
        if _extras_cannot_be_overtaken(session, pending, j):
            _place_extras(session, pending, j)
        else:
            _try_job(session, pending, no_room, j)
        budget.count(1, 0 if len(session.decisions) == before else None)
    if budget.exhausted():
        reason = budget.reason()
        session.untried.update(dict.fromkeys(pending.remaining(), reason))
