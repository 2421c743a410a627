"""reclaim: take resources back from queues above their fair share for a queue below it.

Reclaimer pre-check (KAI): its leaf queue stays within fair share with the job (a non-preemptible job
also within deserved). Victims: preemptible jobs of other queues, only from queues some reclaim strategy
could allow (MaintainFairShare or GuaranteeDeservedQuota, leveled at the lowest common ancestor's
children). A scenario is valid only if the rules hold for the units that stay Evicted; victims that find
another node are Moved and do not count (KAI's consolidating reclaim). So a queue at or below both its
deserved quota and its fair share is never reclaimed from."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from loadmaster.actions.evicting_action import run_evicting_action
from loadmaster.actions.gang import tasks_to_allocate
from loadmaster.actions.victims.search import ScenarioOutcome, VictimRules, VictimSearch
from loadmaster.actions.victims.units import Unit
from loadmaster.queues.reclaim_rules import (
    Reclaimer,
    VictimChunk,
    can_reclaim,
    fits_reclaim_rules,
)
from loadmaster.session import Session

NAME = "reclaim"


def reclaim(session: Session) -> None:
    snapshot, queues = session.snapshot, session.queues
    jobs, leaf = snapshot.jobs, queues.job_leaf
    reclaimers: dict[int, Reclaimer] = {}

    def reclaimer_of(j: int) -> Reclaimer:
        if j not in reclaimers:
            request = session.request_of(tasks_to_allocate(session, j))
            reclaimers[j] = Reclaimer(int(leaf[j]), request, jobs[j].preemptible)
        return reclaimers[j]

    def precheck(session: Session, j: int, tasks: list[int]) -> str | None:
        reclaimers.pop(j, None)
        return can_reclaim(queues.usage, queues.tree, queues.fair_share, reclaimer_of(j))

    def is_victim_job(preemptor: int, victim: int) -> bool:
        # No queue-level pre-filter here: a victim that is only moved is allowed from any queue
        # (the rules apply to the units that stay Evicted, in ``check``).
        return bool(jobs[victim].preemptible and leaf[victim] != leaf[preemptor])

    def check(search: VictimSearch, units: Sequence[Unit], outcome: ScenarioOutcome) -> str:
        evicted = set(outcome.evicted)
        chunks = []
        for unit in units:
            gone = [t for t in unit.tasks if t in evicted]
            if gone:
                request = np.asarray(snapshot.task_request[:, gone].sum(axis=1), dtype=np.int64)
                chunks.append(VictimChunk(int(leaf[unit.job]), request))
        if not chunks:
            return ""
        refusal = fits_reclaim_rules(search.usage_before, queues.tree, queues.fair_share,
                                     reclaimer_of(search.job), chunks)  # fmt: skip
        return refusal or ""

    rules = VictimRules(action=NAME, replace_victims=True, is_victim_job=is_victim_job, check=check,
                        preemptor_key=lambda j: int(leaf[j]))  # fmt: skip
    run_evicting_action(session, rules, precheck=precheck)
