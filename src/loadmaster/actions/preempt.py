"""preempt: within one queue, evict strictly lower-priority preemptible jobs for a higher-priority job.

Victims are evicted, never re-placed; the preemptor is Pipelined (it starts once they are gone). A
non-preemptible preemptor must still fit its queue's deserved quota (checked with the quotas)."""

from __future__ import annotations

from loadmaster.actions.evicting_action import run_evicting_action
from loadmaster.actions.victims.search import VictimRules
from loadmaster.session import Session

NAME = "preempt"


def preempt(session: Session) -> None:
    jobs, leaf = session.snapshot.jobs, session.queues.job_leaf

    def is_victim_job(preemptor: int, victim: int) -> bool:
        return bool(
            jobs[victim].preemptible
            and leaf[victim] == leaf[preemptor]
            and jobs[victim].priority < jobs[preemptor].priority
        )

    rules = VictimRules(action=NAME, replace_victims=False, is_victim_job=is_victim_job,
                        preemptor_key=lambda j: (int(leaf[j]), jobs[j].priority))  # fmt: skip
    run_evicting_action(session, rules, precheck=lambda *_: None)
