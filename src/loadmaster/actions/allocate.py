"""allocate: place pending jobs without evicting anything.

Jobs are taken in order (job priority, then age); each gets the tasks that bring it up to
``min_available`` all or nothing, then its elastic extras one at a time. A task that fits only on
resources being released is pipelined (and then its whole gang is).
"""

from __future__ import annotations

from loadmaster.actions.gang import tasks_to_allocate
from loadmaster.actions.placing import place_all
from loadmaster.session import Session

NAME = "allocate"


def job_order(session: Session) -> list[int]:
    jobs = session.snapshot.jobs
    return sorted(range(len(jobs)), key=lambda j: (-jobs[j].priority, j))


def allocate(session: Session) -> None:
    snapshot = session.snapshot
    for j in job_order(session):
        job = snapshot.jobs[j]
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
                break
            session.commit()
