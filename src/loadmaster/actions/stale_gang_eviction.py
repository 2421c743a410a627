"""stale_gang_eviction: a gang below min_available for longer than the grace period is evicted whole.

Stale (KAI): at least one task active (Running on a Ready node: a task on a NotReady node is not
active) and fewer active tasks than ``min_available``. How long
it has been so is an input (``stale_for``: the control plane keeps the timestamp). Evicted when
``stale_for >= grace`` (KAI compares with >=), the grace being ``config.staleness_grace_period``
(default 60 s). It prevents a half-placed gang from holding resources forever (deadlock)."""

from __future__ import annotations

import numpy as np

from loadmaster.actions.gang import active_on_ready_nodes
from loadmaster.core.columns.snapshot import BOUND
from loadmaster.session import Session

NAME = "stale_gang_eviction"


def stale_gang_eviction(session: Session) -> None:
    snapshot = session.snapshot
    grace = snapshot.config.staleness_grace_period_s
    phase = snapshot.state.task_phase
    # Staleness first, over the whole column at once (NaN: not reported stale; comparisons with it are
    # false): most jobs are not stale, and counting the active tasks costs a vector pass per job.
    for j in np.flatnonzero(snapshot.job_stale_for_s >= grace).tolist():
        job = snapshot.jobs[j]
        active = active_on_ready_nodes(session, j)
        if active == 0 or active >= job.min_available:
            continue
        reason = (
            f"{NAME}: job {job.name} has {active} of min_available {job.min_available} tasks active "
            f"for {job.stale_for_s:g}s >= grace {grace:g}s"
        )
        for t in snapshot.job_tasks[j]:
            if phase[t] == BOUND and snapshot.input_running_mask[t]:
                session.statement.evict(t, NAME, reason)
        session.commit()
