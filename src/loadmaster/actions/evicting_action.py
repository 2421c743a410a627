"""The loop shared by consolidate, reclaim and preempt: pending jobs in queue order, each tried once
with a victim search (and pushed back when an elastic job still has tasks to place)."""

from __future__ import annotations

from collections.abc import Callable

from loadmaster.actions.gang import jobs_with_pending_tasks
from loadmaster.actions.job_queue import PendingJobs
from loadmaster.actions.quota import non_preemptible_refusal
from loadmaster.actions.victims.index import VictimIndex
from loadmaster.actions.victims.search import VictimRules, VictimSearch
from loadmaster.session import Session

# (session, job, its tasks to place) -> why this job may not run this action at all, or None
Precheck = Callable[[Session, int, list[int]], str | None]


def run_evicting_action(session: Session, rules: VictimRules, wants: Callable[[int], bool],
                        precheck: Precheck) -> None:  # fmt: skip
    # Only a job with a Pending task can have tasks to place: ``wants`` is asked of those alone.
    pending = PendingJobs(session, [j for j in jobs_with_pending_tasks(session) if wants(j)])
    if pending.next_leaf() is None:
        return  # nothing waits: no victims to look for
    # Units change only when their job's tasks change: indexed once, refreshed for the jobs a search
    # touched (its victims, and the preemptor, which offers nothing once it has tasks placed).
    index = VictimIndex(session, rules.is_victim_job, rules.preemptor_key)
    while (j := pending.pop()) is not None:
        tasks = pending.tasks_of(session, j)
        refusal = non_preemptible_refusal(session, j, tasks) or precheck(session, j, tasks)
        if refusal is not None:
            _note(session, tasks, f"{rules.action}: {refusal}")
            continue
        pool = index.pool(j)
        if not index.has_candidates(pool, j):
            continue  # nothing to evict: the placement explanation already says why it waits
        victims, why = VictimSearch(session, rules, j, tasks, index).run(pool)
        if victims is not None:
            index.refresh([j, *(unit.job for unit in victims)])
            for t in tasks:
                session.pending_reasons.pop(t, None)
            pending.push(j)
        else:
            _note(session, tasks, f"{rules.action}: no victim set lets it fit" + (f" ({why})" if why else ""))


def _note(session: Session, tasks: list[int], reason: str) -> None:
    for t in tasks:
        session.pending_reasons.setdefault(t, reason)
