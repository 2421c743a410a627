"""The loop shared by consolidate, reclaim and preempt: pending jobs in queue order, each tried once
with a victim search (and pushed back when an elastic job still has tasks to place)."""

from __future__ import annotations

from collections.abc import Callable

from loadmaster.actions.job_queue import PendingJobs
from loadmaster.actions.quota import non_preemptible_refusal
from loadmaster.actions.victim_search import VictimRules, VictimSearch
from loadmaster.actions.victims import Unit, units_of_job
from loadmaster.session import Session

# (session, job, its tasks to place) -> why this job may not run this action at all, or None
Precheck = Callable[[Session, int, list[int]], str | None]


def run_evicting_action(session: Session, rules: VictimRules, wants: Callable[[int], bool],
                        precheck: Precheck) -> None:  # fmt: skip
    snapshot = session.snapshot
    pending = PendingJobs(session, [j for j in range(len(snapshot.jobs)) if wants(j)])
    if pending.next_leaf() is None:
        return  # nothing waits: no victims to look for
    # Units change only when their job loses tasks: built once, refreshed for the victims' jobs.
    units = {v: found for v in range(len(snapshot.jobs)) if (found := units_of_job(session, v))}
    while (j := pending.pop()) is not None:
        tasks = pending.tasks_of(session, j)
        request = session.request_of(tasks)
        refusal = non_preemptible_refusal(session, j, request) or precheck(session, j, tasks)
        if refusal is not None:
            _note(session, tasks, f"{rules.action}: {refusal}")
            continue
        candidates: list[Unit] = [
            unit for v, offered in units.items() if v != j and rules.is_victim_job(j, v) for unit in offered
        ]  # fmt: skip
        if not candidates:
            continue  # nothing to evict: the placement explanation already says why it waits
        victims, why = VictimSearch(session, rules, j, tasks).run(candidates)
        if victims is not None:
            for v in {unit.job for unit in victims}:
                refreshed = units_of_job(session, v)
                if refreshed:
                    units[v] = refreshed
                else:
                    units.pop(v, None)
            for t in tasks:
                session.pending_reasons.pop(t, None)
            pending.push(j)
        else:
            _note(session, tasks, f"{rules.action}: no victim set lets it fit" + (f" ({why})" if why else ""))


def _note(session: Session, tasks: list[int], reason: str) -> None:
    for t in tasks:
        session.pending_reasons.setdefault(t, reason)
