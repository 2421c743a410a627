"""A plain, exhaustive transcription of the spec's victim search (scenario spec, "Victims": Search).

No pruning bound, no caches, no resource-fit shortcut, no incremental index: candidates are rebuilt
from every job's units for every preemptor and every node is examined. Slow and obviously right; the
property tests compare the real search with it. Scenarios are played by ``VictimSearch.scenario``
(unchanged by the search's speed-ups), so what is compared is the choice of victims.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from loadmaster.actions.gang import tasks_to_allocate
from loadmaster.actions.job_queue import PendingJobs
from loadmaster.actions.placing import place_all
from loadmaster.actions.quota import non_preemptible_refusal
from loadmaster.actions.victims.search import ScenarioOutcome, VictimRules, VictimSearch
from loadmaster.actions.victims.units import (
    Unit,
    disruption_key,
    ready_allocatable,
    share,
    tasks_of,
    units_of_job,
)
from loadmaster.session import Session


class ReferenceSearch(VictimSearch):
    """Inherits only ``scenario`` (plays S(V; prefix): the part the speed-ups left alone) and
    ``_reason``; its own methods are named ``plain_*`` so none of the real search's is used."""

    def __init__(
        self, session: Session, rules: VictimRules, job: int, tasks: Sequence[int]
    ) -> None:  # the real search's state is not needed
        self.session, self.rules, self.job, self.tasks = session, rules, job, list(tasks)
        self.statement = session.statement
        self.allocatable = ready_allocatable(session)
        self.gained = share(session, self.tasks, self.allocatable)
        self.max_ratio = session.snapshot.config.max_eviction_ratio
        self.usage_before = session.queues.usage.copy()
        self.job_uses = session.request_of(list(session.snapshot.job_tasks[job])) > 0
        self.limited = True  # always asks over_limit_after
        self.dominant_share = lambda tasks: share(session, tasks, self.allocatable)

    def plain_placeable(self, units: Sequence[Unit], prefix: Sequence[int]) -> bool:
        checkpoint = self.statement.checkpoint()
        for t in tasks_of(units):
            self.statement.evict(t, self.rules.action, "")
        ok = not place_all(self.session, prefix, self.rules.action, pipeline_only=True)
        self.statement.rollback(checkpoint)
        return ok

    def plain_valid(self, units: Sequence[Unit], prefix: Sequence[int]) -> ScenarioOutcome:
        checkpoint = self.statement.checkpoint()
        outcome = self.scenario(units, prefix)
        self.statement.rollback(checkpoint)
        return outcome

    def plain_offer(
        self, chosen: list[Unit], on_node: list[Unit], prefix: Sequence[int]
    ) -> list[Unit] | None:
        if not self.plain_placeable(chosen + on_node, prefix):
            return None
        kept = list(on_node)
        for unit in sorted(on_node, key=lambda u: u.importance):
            trial = [u for u in kept if u is not unit]
            if self.plain_placeable(chosen + trial, prefix):
                kept = trial
        return kept if kept and self.plain_valid(chosen + kept, prefix).valid else None

    def plain_run(self, candidates: list[Unit]) -> tuple[list[Unit] | None, str]:
        chosen: list[Unit] = []
        last_refusal = ""
        for i in range(1, len(self.tasks) + 1):
            prefix = self.tasks[:i]
            outcome = self.plain_valid(chosen, prefix)
            if outcome.valid:
                continue
            last_refusal = outcome.refusal
            offers = []
            for n in sorted({n for u in candidates if u not in chosen for n in u.nodes}):
                on_node = [u for u in candidates if u not in chosen and n in u.nodes]
                kept = self.plain_offer(chosen, on_node, prefix)
                if kept is not None:
                    offers.append((disruption_key(kept), n, kept))
            if not offers:
                return None, last_refusal
            chosen = chosen + min(offers, key=lambda offer: (offer[0], offer[1]))[2]
        final = self.scenario(chosen, self.tasks)
        assert final.valid
        self.session.commit(reason=self._reason(chosen, final.ratio))
        return chosen, ""


def reference_evicting_action(session: Session, rules: VictimRules,
                              precheck: Callable[[Session, int, list[int]], str | None],
                              preemptible_only: bool = False) -> None:  # fmt: skip
    jobs = session.snapshot.jobs

    def wants(j: int) -> bool:
        return (jobs[j].preemptible or not preemptible_only) and bool(tasks_to_allocate(session, j))

    pending = PendingJobs(session, [j for j in range(len(jobs)) if wants(j)])
    while (j := pending.pop()) is not None:
        tasks = pending.tasks_of(session, j)
        refusal = non_preemptible_refusal(session, j, tasks) or precheck(session, j, tasks)
        if refusal is not None:
            _note(session, tasks, f"{rules.action}: {refusal}")
            continue
        candidates = [
            unit for v in range(len(jobs)) if v != j and rules.is_victim_job(j, v)
            for unit in units_of_job(session, v)
        ]  # fmt: skip
        if not candidates:
            continue
        victims, why = ReferenceSearch(session, rules, j, tasks).plain_run(candidates)
        if victims is not None:
            for t in tasks:
                session.pending_reasons.pop(t, None)
            pending.push(j)
        else:
            _note(session, tasks, f"{rules.action}: no victim set lets it fit" + (f" ({why})" if why else ""))


def _note(session: Session, tasks: list[int], reason: str) -> None:
    for t in tasks:
        session.pending_reasons.setdefault(t, reason)
