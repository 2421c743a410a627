"""How far past the first job that gets nothing an action keeps trying (``config.backfill_depth``).

Slurm's backfill tests at most ``bf_max_job_test`` jobs; kube-scheduler scores a percentage of the
nodes. Here: once a job's turn places nothing (no room, a quota, no victim set), an action tries at most
``backfill_depth`` more jobs, then stops; the jobs it did not reach wait for the next cycle, with that
as their reason. ``None`` (the default, and the scenario format's semantics): no bound, every pending
job is tried. ``0``: strict first come, first served in queue order (the first job that does not fit
blocks every later one: no backfilling). A cycle's work is then bounded by the depth, not by the
Pending backlog (with ``PendingJobs``, the jobs not reached cost no Python step).

A run of identical single-task jobs placed by one evaluation counts as the jobs it holds, and is cut to
the jobs still allowed.

The jobs allocate does not reach are left out of the later (evicting) actions of the cycle too
(``evicting_action._reached_by_allocate``): those could only make them Pipelined, and only allocate binds
a Pipelined task, in a later cycle.
"""

from __future__ import annotations


class DepthBudget:
    def __init__(self, depth: int | None) -> None:
        self.depth = depth
        self.missed = False  # a job's turn placed nothing
        self.tried_past = 0  # jobs tried since

    def exhausted(self) -> bool:
        """No further job may be tried in this action."""
        return self.depth is not None and self.missed and self.tried_past >= self.depth

    def left(self) -> int | None:
        """How many more jobs may be tried (None: no bound yet)."""
        if self.depth is None or not self.missed:
            return None
        return max(self.depth - self.tried_past, 0)

    def count(self, jobs: int, first_miss: int | None) -> None:
        """A turn tried ``jobs`` jobs; ``first_miss``: the position of the first that got nothing."""
        if self.missed:
            self.tried_past += jobs
        elif first_miss is not None:
            self.missed = True
            self.tried_past += jobs - first_miss - 1

    def reason(self) -> str:
        return (
            f"not tried in this cycle: backfill_depth {self.depth} reached "
            f"({self.tried_past} jobs tried after the first that got nothing)"
        )
