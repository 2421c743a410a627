"""allocate: place pending jobs without evicting anything.

Jobs are taken in order (job priority, then age); each gets the tasks that bring it up to
``min_available`` all or nothing, then its elastic extras one at a time. A task that fits only on
resources being released is pipelined (and then its whole gang is).

Runs of consecutive single-task jobs whose tasks are identical (same equivalence class) are placed
with one ``choose_many`` call: the result is the same as one job at a time (each job still gets
exactly its own task, in order), and once one of them finds no node, none of the rest can, since
allocate only ever fills nodes.
"""

from __future__ import annotations

from collections.abc import Hashable

from loadmaster.actions.gang import active_count, pending_tasks, tasks_to_allocate
from loadmaster.actions.placing import place_all
from loadmaster.placement.engine import Choice
from loadmaster.session import Session

NAME = "allocate"


def job_order(session: Session) -> list[int]:
    jobs = session.snapshot.jobs
    return sorted(range(len(jobs)), key=lambda j: (-jobs[j].priority, j))


def _single_task(session: Session, j: int) -> int | None:
    """The one pending task of a job that needs exactly one task placed and has nothing else pending."""
    job = session.snapshot.jobs[j]
    pending = pending_tasks(session, j)
    if job.min_available == 1 and len(pending) == 1 and active_count(session, j) == 0:
        return pending[0]
    return None


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

    session.engine.choose_many(run, apply)
    session.commit()


def _place_job(session: Session, j: int) -> None:
    job = session.snapshot.jobs[j]
    while tasks := tasks_to_allocate(session, j):
        unplaced = place_all(session, tasks, NAME)
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


def allocate(session: Session) -> None:
    run: list[int] = []
    run_class: Hashable = None
    for j in job_order(session):
        single = _single_task(session, j)
        if single is not None and run and session.engine.class_of(single) == run_class:
            run.append(single)
            continue
        if run:
            _place_run(session, run)
            run = []
        if single is not None:
            run, run_class = [single], session.engine.class_of(single)
        else:
            _place_job(session, j)
    if run:
        _place_run(session, run)
