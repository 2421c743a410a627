"""The loop shared by consolidate, reclaim and preempt: pending jobs in queue order, each tried once
with a victim search (and pushed back when an elastic job still has tasks to place).

A job allocate did not reach (``config.backfill_depth``) is left out of the queue, and so is a job whose
search in this action rests (the control plane's failed-search backoff, ``core/search_backoff.py``), its
tasks told why; every search run is recorded in ``session.searches`` for that backoff."""

from __future__ import annotations

from collections.abc import Callable
from itertools import filterfalse

import numpy as np

from loadmaster.actions.backfill_depth import DepthBudget
from loadmaster.actions.gang import jobs_with_pending_tasks
from loadmaster.actions.job_queue import PendingJobs
from loadmaster.actions.quota import non_preemptible_refusal
from loadmaster.actions.victims.failed_searches import FailedSearches
from loadmaster.actions.victims.fit import fits_total_room, total_free_room
from loadmaster.actions.victims.index import VictimIndex
from loadmaster.actions.victims.search import VictimRules, VictimSearch
from loadmaster.session import IntArray, Session

# (session, job, its tasks to place) -> why this job may not run this action at all, or None
Precheck = Callable[[Session, int, list[int]], str | None]


def run_evicting_action(session: Session, rules: VictimRules, precheck: Precheck,
                        preemptible_only: bool = False) -> None:  # fmt: skip
    """Every job with tasks to place (``preemptible_only``: of preemptible jobs only) in queue order."""
    # Only a job with a Pending task can have tasks to place; PendingJobs keeps those that have some.
    waiting = jobs_with_pending_tasks(session)
    if preemptible_only:
        waiting = waiting[session.snapshot.job_preemptible[waiting]]
    waiting = _not_resting(session, rules.action, _reached_by_allocate(session, waiting))
    pending = PendingJobs(session, waiting)
    if pending.next_leaf() is None:
        return  # nothing waits: no victims to look for
    # Units change only when their job's tasks change: indexed once, refreshed for the jobs a search
    # touched (its victims, and the preemptor, which offers nothing once it has tasks placed).
    index = VictimIndex(session, rules.is_victim_job, rules.preemptor_key)
    failed = FailedSearches(session, index) if rules.remember_failures else None
    budget = DepthBudget(session.snapshot.config.backfill_depth)
    free_room = _TotalFreeRoom(session)
    while not budget.exhausted() and (j := pending.pop()) is not None:
        before = len(session.decisions)
        _try_job(session, rules, precheck, pending, index, free_room, j, failed)
        budget.count(1, 0 if len(session.decisions) == before else None)


def _try_job(session: Session, rules: VictimRules, precheck: Precheck, pending: PendingJobs,
             index: VictimIndex, free_room: _TotalFreeRoom, j: int,
             failed: FailedSearches | None) -> None:  # fmt: skip
    tasks = pending.tasks_of(session, j)
    if nothing_to_change(session, index, j, tasks):
        return
    refusal = non_preemptible_refusal(session, j, tasks) or precheck(session, j, tasks)
    if refusal is not None:
        _note(session, j, tasks, f"{rules.action}: {refusal}")
        return
    pool = index.pool(j)
    if not index.has_candidates(pool, j):
        return  # nothing to evict: the placement explanation already says why it waits
    if _cannot_change_anything(session, rules, free_room, j, tasks):
        return
    if rules.hopeless(index, j, tasks):
        session.searches.append((rules.action, j, False))
        _note(session, j, tasks, f"{rules.action}: no victim set lets it fit")
        return
    known = failed.recall(pool, j, tasks) if failed is not None else None
    if known is not None:  # an earlier search settles this one: it would fail with the same reason
        victims, why = None, known
    else:
        victims, why = VictimSearch(session, rules, j, tasks, index).run(pool)
        if victims is None and failed is not None:
            failed.note(pool, j, tasks, why)
    session.searches.append((rules.action, j, victims is not None))
    if victims is not None:
        index.refresh([j, *(unit.job for unit in victims)])
        for t in tasks:
            session.pending_reasons.pop(t, None)
        pending.push(j)
    else:
        _note(session, j, tasks, f"{rules.action}: no victim set lets it fit" + (f" ({why})" if why else ""))


def _reached_by_allocate(session: Session, waiting: IntArray) -> IntArray:
    """``waiting`` less the jobs allocate left untried (``config.backfill_depth``): they wait for the next
    cycle in every action. An evicting action reaching one could only make it Pipelined (its victims
    gone, or none needed), and only allocate binds a Pipelined task, in a later cycle: one it does not
    reach there either stays Pending while every cycle makes room for it again."""
    if not session.untried:
        return waiting
    untried = np.fromiter(session.untried, dtype=np.int64, count=len(session.untried))
    return waiting[~np.isin(waiting, untried)]


def _not_resting(session: Session, action: str, waiting: IntArray) -> IntArray:
    """``waiting`` less the jobs whose search in ``action`` rests now; their Pending tasks are told
    why, once per job (``Session.resting``: a reason an action gives a task itself comes first)."""
    resting = session.snapshot.config.resting_searches
    rests = resting.of(action) if resting is not None else None
    if not rests:
        return waiting
    jobs = session.snapshot.jobs
    keep = np.ones(len(waiting), dtype=np.bool_)
    for position, j in enumerate(waiting.tolist()):
        rest = rests.get(jobs[j].name)
        if rest is not None:
            keep[position] = False
            failed = "1 failed search" if rest.failures == 1 else f"{rest.failures} failed searches in a row"
            session.resting.setdefault(
                j,
                f"{action}: not searched until {rest.until_s - session.now_s:.0f} s from now "
                f"(failed-search backoff after {failed})",
            )
    return waiting[keep]


def nothing_to_change(session: Session, index: VictimIndex, j: int, tasks: list[int]) -> bool:
    """Job j's turn changes nothing, whatever its pre-checks say: a refusal's note would be dropped
    (every task already has a reason, and ``_note`` only sets one where none is), and with no candidate
    victim there is no search. A backlog's gangs (each with its reason from allocate) are mostly this,
    in every evicting action of every cycle; the pre-checks (a reclaimer's fair share, the quotas) are
    then not worked out."""
    return _explained(session, j, tasks) and not index.has_candidates(index.pool(j), j)


def _explained(session: Session, j: int, tasks: list[int]) -> bool:
    """Every task has its reason already: its own, or its job's as a resting search's."""
    return j in session.resting or all(map(session.pending_reasons.__contains__, tasks))


def _note(session: Session, j: int, tasks: list[int], reason: str) -> None:
    """``setdefault`` for each task; the tasks that already have a reason (most, when a backlog of gangs
    is looked at by every action of every cycle) are skipped by a filter that iterates in C, and a job
    whose search rested in an earlier action keeps that reason (``Session.resting``)."""
    if j in session.resting:
        return
    reasons = session.pending_reasons
    for t in filterfalse(reasons.__contains__, tasks):
        reasons[t] = reason


def _cannot_change_anything(session: Session, rules: VictimRules, free_room: _TotalFreeRoom, j: int,
                            tasks: list[int]) -> bool:  # fmt: skip
    """A search that must fail and whose note would be dropped: with moves only, tasks that need more
    than the cluster's total free room have no valid scenario (``victims/fit.py``), and a failed search
    leaves the statement as it found it; every task already has its reason (the note only sets one
    where none is). Skipping it changes nothing, and saves playing its scenarios."""
    if not rules.moves_only or not _explained(session, j, tasks):
        return False
    return not fits_total_room(session.snapshot.task_request, free_room.now(), tasks)


class _TotalFreeRoom:
    """``total_free_room`` once per state met at the top of a job's turn, not once per job: there the
    state is the action's start plus what was committed since (a search that fails rolls back all it
    played), so the decisions made so far and the statement's length name it."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._stamp: tuple[int, int] | None = None
        self._room: IntArray | None = None

    def now(self) -> IntArray | None:
        session = self._session
        stamp = session.state_stamp()
        if stamp != self._stamp:
            self._stamp, self._room = stamp, total_free_room(session)
        return self._room
