"""The loop shared by consolidate, reclaim and preempt: pending jobs in queue order, each tried once
with a victim search (and pushed back when an elastic job still has tasks to place)."""

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
from loadmaster.session import Session

# (session, job, its tasks to place) -> why this job may not run this action at all, or None
Precheck = Callable[[Session, int, list[int]], str | None]


def run_evicting_action(session: Session, rules: VictimRules, precheck: Precheck,
                        preemptible_only: bool = False) -> None:  # fmt: skip
    """Every job with tasks to place (``preemptible_only``: of preemptible jobs only) in queue order."""
    # Only a job with a Pending task can have tasks to place; PendingJobs keeps those that have some.
    waiting = np.asarray(jobs_with_pending_tasks(session), dtype=np.int64)
    if preemptible_only:
        waiting = waiting[session.snapshot.job_preemptible[waiting]]
    pending = PendingJobs(session, waiting)
    if pending.next_leaf() is None:
        return  # nothing waits: no victims to look for
    # Units change only when their job's tasks change: indexed once, refreshed for the jobs a search
    # touched (its victims, and the preemptor, which offers nothing once it has tasks placed).
    index = VictimIndex(session, rules.is_victim_job, rules.preemptor_key)
    failed = FailedSearches(session, index) if rules.remember_failures else None
    budget = DepthBudget(session.snapshot.config.backfill_depth)
    while not budget.exhausted() and (j := pending.pop()) is not None:
        before = len(session.decisions)
        _try_job(session, rules, precheck, pending, index, j, failed)
        budget.count(1, 0 if len(session.decisions) == before else None)


def _try_job(session: Session, rules: VictimRules, precheck: Precheck, pending: PendingJobs,
             index: VictimIndex, j: int, failed: FailedSearches | None) -> None:  # fmt: skip
    tasks = pending.tasks_of(session, j)
    refusal = non_preemptible_refusal(session, j, tasks) or precheck(session, j, tasks)
    if refusal is not None:
        _note(session, tasks, f"{rules.action}: {refusal}")
        return
    pool = index.pool(j)
    if not index.has_candidates(pool, j):
        return  # nothing to evict: the placement explanation already says why it waits
    if _cannot_change_anything(session, rules, tasks):
        return
    if rules.hopeless(session, tasks):
        _note(session, tasks, f"{rules.action}: no victim set lets it fit")
        return
    known = failed.recall(pool, j, tasks) if failed is not None else None
    if known is not None:  # an earlier search settles this one: it would fail with the same reason
        victims, why = None, known
    else:
        victims, why = VictimSearch(session, rules, j, tasks, index).run(pool)
        if victims is None and failed is not None:
            failed.note(pool, j, tasks, why)
    if victims is not None:
        index.refresh([j, *(unit.job for unit in victims)])
        for t in tasks:
            session.pending_reasons.pop(t, None)
        pending.push(j)
    else:
        _note(session, tasks, f"{rules.action}: no victim set lets it fit" + (f" ({why})" if why else ""))


def _note(session: Session, tasks: list[int], reason: str) -> None:
    """``setdefault`` for each task; the tasks that already have a reason (most, when a backlog of gangs
    is looked at by every action of every cycle) are skipped by a filter that iterates in C."""
    reasons = session.pending_reasons
    for t in filterfalse(reasons.__contains__, tasks):
        reasons[t] = reason


def _cannot_change_anything(session: Session, rules: VictimRules, tasks: list[int]) -> bool:
    """A search that must fail and whose note would be dropped: with moves only, tasks that need more
    than the cluster's total free room have no valid scenario (``victims/fit.py``), and a failed search
    leaves the statement as it found it; every task already has its reason (the note only sets one
    where none is). Skipping it changes nothing, and saves playing its scenarios."""
    if not rules.moves_only or not all(map(session.pending_reasons.__contains__, tasks)):
        return False
    return not fits_total_room(session.snapshot.task_request, total_free_room(session), tasks)
