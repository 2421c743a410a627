"""The victim search shared by consolidate, reclaim and preempt (scenario spec, "Victims": Search).

For a job with tasks t1..tk to place, V = {}. For i = 1..k: if S(V; t1..ti) is valid, go on. Otherwise
each node n offers W_n: start from U = the units not in V with a task on n (nothing, if t1..ti cannot
all be placed even with V and U evicted); go through U most important first, keeping a unit Running
when t1..ti can still all be placed without evicting it (the reprieve); n offers what is left if
S(V + W_n; t1..ti) is valid. The least disruptive offer (ties: node name) joins V. No offer: the job
gets nothing and nothing is evicted. After i = k, S(V; t1..tk) is committed.

Pruning, exact: an offer W_n is never less disruptive than the best single unit on n, so nodes are
examined in order of that bound and the scan stops once the bound cannot beat the best offer found.

S(V; t1..ti): evict every task of V; place t1..ti by the ordinary node choice (releasing room counts
as free, always Pipelined); for reclaim and consolidate, then re-place each unit of V in job order
(higher priority, older), its tasks all or none (another node: Moved; its own node: stays Running).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from loadmaster.actions.placing import place_all
from loadmaster.actions.quota import over_limit_after
from loadmaster.actions.victims import DisruptionKey, Unit, disruption_key, ready_allocatable, share, tasks_of
from loadmaster.core.snapshot import PIPELINED, RELEASING
from loadmaster.session import Session


@dataclass(frozen=True, slots=True)
class ScenarioOutcome:
    placed: bool
    evicted: tuple[int, ...] = ()
    moved: tuple[int, ...] = ()
    ratio: float = 0.0
    refusal: str = ""  # why the scenario is not valid ("" = valid)

    @property
    def valid(self) -> bool:
        return self.placed and not self.refusal


@dataclass(slots=True)
class VictimRules:
    """What differs between the three actions."""

    action: str
    replace_victims: bool  # reclaim and consolidate re-place victims; preempt never does
    is_victim_job: Callable[[int, int], bool]  # (preemptor job, candidate victim job)
    # extra validity rule on a scenario: (search, V, outcome) -> refusal or ""
    check: Callable[[VictimSearch, Sequence[Unit], ScenarioOutcome], str] = lambda *_: ""


@dataclass(slots=True)
class Offer:
    key: DisruptionKey
    node: int
    units: list[Unit]


class VictimSearch:
    def __init__(self, session: Session, rules: VictimRules, job: int, tasks: Sequence[int]) -> None:
        self.session, self.rules, self.job, self.tasks = session, rules, job, list(tasks)
        self.statement = session.statement
        self.allocatable = ready_allocatable(session)
        self.gained = share(session, self.tasks, self.allocatable)
        self.max_ratio = session.snapshot.config.max_eviction_ratio
        # queue usage before any simulated eviction (the reclaim rules subtract victims themselves)
        self.usage_before = session.queues.usage.copy()

    # -- scenarios ----------------------------------------------------------------------------------

    def _evict(self, units: Sequence[Unit], reason: str) -> list[int]:
        victims = tasks_of(units)
        for t in victims:
            self.statement.evict(t, self.rules.action, reason)
        return victims

    def placeable(self, units: Sequence[Unit], prefix: Sequence[int]) -> bool:
        """Can t1..ti all be placed with these units evicted (nothing re-placed)? Leaves no trace."""
        checkpoint = self.statement.checkpoint()
        self._evict(units, "")
        ok = not place_all(self.session, prefix, self.rules.action, pipeline_only=True)
        self.statement.rollback(checkpoint)
        return ok

    def scenario(self, units: Sequence[Unit], prefix: Sequence[int], reason: str = "") -> ScenarioOutcome:
        """Play S(V; prefix) on the statement (the caller rolls back or commits)."""
        snapshot, session = self.session.snapshot, self.session
        victims = self._evict(units, reason)
        if place_all(session, prefix, self.rules.action, pipeline_only=True, reason=reason):
            return ScenarioOutcome(placed=False)
        if self.rules.replace_victims:
            for unit in sorted(units, key=lambda u: u.importance):
                waiting = [t for t in unit.tasks if snapshot.state.task_phase[t] == RELEASING]
                if waiting:
                    place_all(session, waiting, self.rules.action, pipeline_only=True, reason=reason)
        phase = snapshot.state.task_phase
        evicted = tuple(t for t in victims if phase[t] == RELEASING)
        moved = tuple(t for t in victims if phase[t] == PIPELINED)
        disrupted = share(session, evicted + moved, self.allocatable)
        ratio = disrupted / self.gained if self.gained > 0 else (0.0 if disrupted == 0 else float("inf"))
        outcome = ScenarioOutcome(True, evicted, moved, ratio)
        over_limit = over_limit_after(session, self.job)
        if over_limit is not None:
            return ScenarioOutcome(True, evicted, moved, ratio, over_limit)
        if ratio > self.max_ratio:
            refusal = f"eviction ratio {ratio:.2f} > max_eviction_ratio {self.max_ratio:g}"
            return ScenarioOutcome(True, evicted, moved, ratio, refusal)
        refusal = self.rules.check(self, units, outcome)
        return ScenarioOutcome(True, evicted, moved, ratio, refusal) if refusal else outcome

    def valid(self, units: Sequence[Unit], prefix: Sequence[int]) -> ScenarioOutcome:
        checkpoint = self.statement.checkpoint()
        outcome = self.scenario(units, prefix)
        self.statement.rollback(checkpoint)
        return outcome

    # -- the search ---------------------------------------------------------------------------------

    def _offer(self, chosen: list[Unit], on_node: list[Unit], prefix: Sequence[int]) -> list[Unit] | None:
        if not self.placeable(chosen + on_node, prefix):
            return None
        kept = list(on_node)
        for unit in sorted(on_node, key=lambda u: u.importance):  # most important first: reprieve
            trial = [u for u in kept if u is not unit]
            if self.placeable(chosen + trial, prefix):
                kept = trial
        return kept if kept and self.valid(chosen + kept, prefix).valid else None

    def _best_offer(self, chosen: list[Unit], candidates: list[Unit], prefix: Sequence[int]) -> Offer | None:
        taken = set(chosen)
        by_node: dict[int, list[Unit]] = {}
        for unit in candidates:
            if unit not in taken:
                for n in unit.nodes:
                    by_node.setdefault(n, []).append(unit)
        bounds = sorted((min(u.solo_key for u in units), n) for n, units in by_node.items())
        best: Offer | None = None
        for bound, n in bounds:
            if best is not None and (bound, n) > (best.key, best.node):
                break
            kept = self._offer(chosen, by_node[n], prefix)
            if kept is not None:
                key = disruption_key(kept)
                if best is None or (key, n) < (best.key, best.node):
                    best = Offer(key, n, kept)
        return best

    def run(self, candidates: list[Unit]) -> tuple[list[Unit] | None, str]:
        """Search and, on success, commit S(V; t1..tk). Returns (the victim units V or None, why not)."""
        chosen: list[Unit] = []
        last_refusal = ""
        for i in range(1, len(self.tasks) + 1):
            prefix = self.tasks[:i]
            outcome = self.valid(chosen, prefix)
            if outcome.valid:
                continue
            last_refusal = outcome.refusal
            offer = self._best_offer(chosen, candidates, prefix)
            if offer is None:
                return None, last_refusal
            chosen = chosen + offer.units
        final = self.scenario(chosen, self.tasks)
        if not final.valid:  # cannot happen: V was built so that S(V; t1..tk) is valid
            raise AssertionError(f"victim search committed an invalid scenario: {final}")
        self.session.commit(reason=self._reason(chosen, final.ratio))
        return chosen, ""

    def _reason(self, chosen: Sequence[Unit], ratio: float) -> str:
        if not chosen:
            return f"{self.rules.action}: placed without evictions"
        job = self.session.snapshot.jobs[self.job]
        return (
            f"{self.rules.action}: for job {job.name} (priority {job.priority}, queue {job.queue}); "
            f"eviction ratio {ratio:.2f} <= {self.max_ratio:g}"
        )
