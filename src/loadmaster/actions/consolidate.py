"""consolidate: move running preemptible tasks so that a pending preemptible job fits.

A scenario is valid only if every victim lands somewhere (Moved, or back on its own node): no
permanent evictions. At most ``config.max_consolidation_moves`` tasks are moved per cycle. Only
preemptible pending jobs are considered (KAI's rule: moving others' work for a job that could never
be moved itself would not be reversible)."""

from __future__ import annotations

from collections.abc import Sequence

from loadmaster.actions.evicting_action import run_evicting_action
from loadmaster.actions.gang import tasks_to_allocate
from loadmaster.actions.victims.search import ScenarioOutcome, VictimRules, VictimSearch
from loadmaster.actions.victims.units import Unit
from loadmaster.session import Session

NAME = "consolidate"


def consolidate(session: Session) -> None:
    jobs = session.snapshot.jobs
    budget = session.snapshot.config.max_consolidation_moves

    def check(search: VictimSearch, units: Sequence[Unit], outcome: ScenarioOutcome) -> str:
        if outcome.evicted:
            return f"{len(outcome.evicted)} victims would find no other node"
        moved_so_far = sum(1 for d in session.decisions if d.action == NAME and d.kind == "move")
        if moved_so_far + len(outcome.moved) > budget:
            return f"{len(outcome.moved)} moves exceed the budget of {budget} per cycle"
        return ""

    rules = VictimRules(
        action=NAME,
        replace_victims=True,
        is_victim_job=lambda preemptor, victim: jobs[victim].preemptible,
        check=check,
        preemptor_key=lambda j: (),  # every preemptor has the same victims: the preemptible jobs
    )
    run_evicting_action(
        session, rules, wants=lambda j: jobs[j].preemptible and bool(tasks_to_allocate(session, j)),
        precheck=lambda *_: None,
    )  # fmt: skip
