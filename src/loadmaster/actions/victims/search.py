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

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from loadmaster.actions.placing import place_all
from loadmaster.actions.quota import over_limit_after
from loadmaster.actions.victims.fit import FitBound
from loadmaster.actions.victims.index import Pool, VictimIndex, Walked
from loadmaster.actions.victims.landing import LandingBound
from loadmaster.actions.victims.reprieve_room import ReprieveRoom
from loadmaster.actions.victims.units import DisruptionKey, Unit, disruption_key, tasks_of
from loadmaster.core.columns.snapshot import PIPELINED, RELEASING
from loadmaster.session import Session


@dataclass(frozen=True, slots=True)
class ScenarioOutcome:
    placed: bool
    evicted: tuple[int, ...] = ()
    moved: tuple[int, ...] = ()
    ratio: float = 0.0
    refusal: str = ""  # why the scenario is not valid ("" = valid)
    cut_short: bool = False  # the victims' re-placement stopped once it could no longer be valid

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
    # Preemptors with equal keys have the same victim jobs: is_victim_job(j, v) depends on j only
    # through this key, so they share one candidate pool (the default, the job itself, shares none).
    preemptor_key: Callable[[int], Hashable] = lambda j: j
    # Every victim must land again (consolidate): no offer can be valid when the tasks need more than
    # the cluster's total free room (``FitBound.fits_total_room``), so none is looked for.
    moves_only: bool = False
    # (the action's victim index, the job, its tasks to place) -> True when no scenario can be valid, so
    # none is played (the job gets the plain "no victim set lets it fit", as a search that tried every
    # offer would give it)
    hopeless: Callable[[VictimIndex, int, Sequence[int]], bool] = lambda *_: False
    # (the index, the job, its tasks) -> the only nodes whose offer, with nothing chosen yet, may be valid,
    # as (bound, node) in increasing order, a bound being no more than any valid offer's disruption key
    # there (None: every node, by ``VictimIndex.walk``); consolidate's with one move left (``one_move.py``)
    walk_only: Callable[[VictimIndex, int, Sequence[int]], list[Walked] | None] = lambda *_: None
    # How many victims a valid scenario may move (None: no bound); consolidate's moves budget left
    move_limit: Callable[[], int | None] = lambda: None
    # A failed search settles later ones of the same task classes on the same state
    # (``failed_searches.py``), and node offers serve later searches of the class (``offer_memo.py``):
    # only when the pool, ``is_victim_job`` and ``check`` ignore the preemptor
    remember_failures: bool = False


@dataclass(slots=True)
class Offer:
    key: DisruptionKey
    node: int
    units: list[Unit]


class VictimSearch:
    """One job's search. Every scenario is played on the session's statement and undone, so all of
    them start from the same state: their outcomes are cached by (units, i), a scenario that the
    resource-fit bound rules out is never played (``FitBound``), and the last scenario played stays
    applied until something else needs the statement (the final S(V; t1..tk) is then often already
    in place: committed as is instead of being played again)."""

    def __init__(self, session: Session, rules: VictimRules, job: int, tasks: Sequence[int],
                 index: VictimIndex) -> None:  # fmt: skip
        self.session, self.rules, self.job, self.tasks = session, rules, job, list(tasks)
        self.index = index
        self.statement = session.statement
        self.dominant_share: Callable[[Sequence[int]], float] = index.share
        self.gained = self.dominant_share(self.tasks)
        self.max_ratio = session.snapshot.config.max_eviction_ratio
        # queue usage before any simulated eviction (the reclaim rules subtract victims themselves)
        self.usage_before = session.queues.usage.copy()
        self.fit = FitBound(session, self.tasks, index.input_node, index.needs)
        self.job_uses, self.limited = index.job_uses(job), index.limited(job)
        self._outcomes: dict[ScenarioKey, ScenarioOutcome] = {}
        self._placeable: dict[ScenarioKey, bool] = {}
        self._tasks: dict[frozenset[tuple[int, int]], list[int]] = {}  # victim set -> its tasks
        self._applied: tuple[ScenarioKey, int] | None = None  # (scenario left applied, its checkpoint)
        # placeable(V; t1) as a formula where it is one (reprieve_room.py): the reprieve with i = 1
        self.room = (
            ReprieveRoom.of(session, self.tasks[0], index) if rules.replace_victims and self.tasks else None
        )
        # node offers for i = 1 shared with the action's other searches of this class (offer_memo.py)
        self.offers = index.offers
        self.offer_key = index.offers.key(self.tasks, self.limited) if rules.remember_failures else None
        self.stamp = session.state_stamp()
        # an offer whose victims cannot all land again is refused without its play (landing.py)
        self.landing = (
            LandingBound.of(session, self.tasks, self.fit, index.needs, index.share, self.gained,
                            rules.move_limit())
            if rules.moves_only else None
        )  # fmt: skip

    # -- scenarios ----------------------------------------------------------------------------------

    def _victims(self, units: Sequence[Unit]) -> list[int]:
        """``tasks_of(units)``, once per victim set in this search (a whole-job unit holds hundreds)."""
        key = frozenset([(u.job, u.sub) for u in units])
        found = self._tasks.get(key)
        if found is None:
            found = self._tasks[key] = tasks_of(units)
        return found

    def _evict(self, units: Sequence[Unit], reason: str) -> list[int]:
        victims = tasks_of(units)
        self.statement.evict_many(victims, self.rules.action, reason)
        return victims

    def _undo_applied(self) -> None:
        if self._applied is not None:
            self.statement.rollback(self._applied[1])
            self._applied = None

    def placeable(self, units: Sequence[Unit], i: int) -> bool:
        """Can t1..ti all be placed with these units evicted (nothing re-placed)?"""
        key = _key(units, i)
        known = self._placeable.get(key)
        if known is not None:
            return known
        if not self.rules.replace_victims:
            return self.valid(units, i).placed  # preempt: the whole scenario costs no more
        prefix = self.tasks[:i]
        if not self.fit.may_place(units, prefix, self._victims):
            ok = False
        else:
            self._undo_applied()
            checkpoint = self.statement.checkpoint()
            self.statement.evict_many(self._victims(units), self.rules.action, "")
            ok = not place_all(self.session, prefix, self.rules.action, pipeline_only=True)
            self.statement.rollback(checkpoint)
        self._placeable[key] = ok
        return ok

    def scenario(self, units: Sequence[Unit], prefix: Sequence[int], reason: str = "",
                 validity_only: bool = False) -> ScenarioOutcome:  # fmt: skip
        """Play S(V; prefix) on the statement (the caller rolls back or commits). ``validity_only``: the
        caller reads only ``valid``, so the re-placement stops once it proves the scenario invalid
        (``ReplacementWatch``) and the outcome says ``cut_short``."""
        snapshot, session = self.session.snapshot, self.session
        victims = self._evict(units, reason)
        if place_all(session, prefix, self.rules.action, pipeline_only=True, reason=reason):
            return ScenarioOutcome(placed=False)
        if self.rules.replace_victims:
            watch = ReplacementWatch(self) if validity_only else None
            for unit in sorted(units, key=lambda u: u.importance):
                waiting = [t for t in unit.tasks if snapshot.state.task_phase[t] == RELEASING]
                if waiting:
                    left = place_all(session, waiting, self.rules.action, pipeline_only=True, reason=reason,
                                     give_up=watch)  # fmt: skip
                    if watch is not None and (watch.refusal or (left and self.rules.moves_only)):
                        refusal = watch.refusal or "a victim would find no other node"
                        return ScenarioOutcome(True, refusal=refusal, cut_short=True)
        phase = snapshot.state.task_phase
        evicted = tuple(t for t in victims if phase[t] == RELEASING)
        moved = tuple(t for t in victims if phase[t] == PIPELINED)
        disrupted = self.dominant_share(evicted + moved)
        ratio = disrupted / self.gained if self.gained > 0 else (0.0 if disrupted == 0 else float("inf"))
        outcome = ScenarioOutcome(True, evicted, moved, ratio)
        over_limit = over_limit_after(session, self.job, self.job_uses) if self.limited else None
        if over_limit is not None:
            return ScenarioOutcome(True, evicted, moved, ratio, over_limit)
        if ratio > self.max_ratio:
            refusal = f"eviction ratio {ratio:.2f} > max_eviction_ratio {self.max_ratio:g}"
            return ScenarioOutcome(True, evicted, moved, ratio, refusal)
        refusal = self.rules.check(self, units, outcome)
        return ScenarioOutcome(True, evicted, moved, ratio, refusal) if refusal else outcome

    def valid(self, units: Sequence[Unit], i: int, validity_only: bool = False) -> ScenarioOutcome:
        """The outcome of S(units; t1..ti); a played scenario is left applied (see the class).
        ``validity_only``: only ``valid`` is read (``scenario``); an outcome cut short is played again
        when a caller asks for the whole of it."""
        key = _key(units, i)
        known = self._outcomes.get(key)
        if known is not None and (validity_only or not known.cut_short):
            return known
        prefix = self.tasks[:i]
        if not self.fit.may_place(units, prefix, self._victims):
            outcome = ScenarioOutcome(placed=False)
        elif validity_only and self.landing is not None and self.landing.cannot_land(self._victims(units)):
            # only offers ask for validity alone, once t1 is known placeable with these units evicted
            outcome = ScenarioOutcome(True, refusal="its victims cannot all land again", cut_short=True)
        else:
            self._undo_applied()
            checkpoint = self.statement.checkpoint()
            outcome = self.scenario(units, prefix, validity_only=validity_only)
            self._applied = (key, checkpoint)
        self._outcomes[key] = outcome
        self._placeable[key] = outcome.placed  # the scenario places t1..ti first, exactly as placeable
        return outcome

    # -- the search ---------------------------------------------------------------------------------

    def _offer(self, chosen: list[Unit], on_node: list[Unit], i: int, n: int) -> list[Unit] | None:
        if i > 1 or chosen or self.offer_key is None:
            return self._work_out_offer(chosen, on_node, i, n)
        known, offer = self.offers.recall(self.offer_key, self.stamp, n, on_node)
        if not known:
            offer = self._work_out_offer(chosen, on_node, i, n)
            self.offers.note(self.offer_key, self.stamp, n, on_node, offer)
        return offer

    def _work_out_offer(self, chosen: list[Unit], on_node: list[Unit], i: int, n: int) -> list[Unit] | None:
        if i == 1 and self.room is not None:
            found = self.room.reprieve(chosen, on_node, n)  # the same units kept, without the plays
            if found is None:
                return None
            kept = found
        else:
            if not self.placeable(chosen + on_node, i):
                return None
            kept = list(on_node)
            for unit in sorted(on_node, key=lambda u: u.importance):  # most important first: reprieve
                trial = [u for u in kept if u is not unit]
                if self.placeable(chosen + trial, i):
                    kept = trial
        return kept if kept and self.valid(chosen + kept, i, validity_only=True).valid else None

    def _best_offer(self, chosen: list[Unit], pool: Pool, i: int) -> Offer | None:
        """Nodes in increasing (bound, name), the bound being the node's best single unit: an offer is
        never less disruptive than that, so the walk stops once the bound cannot beat the best."""
        if self.rules.moves_only and not self.fit.fits_total_room(self.tasks[:i]):
            return None
        taken = {(u.job, u.sub) for u in chosen}
        only = None if chosen else self.rules.walk_only(self.index, self.job, self.tasks)
        # every node; else only those whose offer may be valid, each with its own (tighter) bound
        walk = self.index.walk(pool, self.job, taken) if only is None else only
        best: Offer | None = None
        for bound, n in walk:
            if best is not None and (bound, n) > (best.key, best.node):
                break
            kept = self._offer(chosen, self.index.on(n, pool, self.job, taken), i, n)
            if kept is not None:
                key = disruption_key(kept)
                if best is None or (key, n) < (best.key, best.node):
                    best = Offer(key, n, kept)
        return best

    def run(self, pool: Pool) -> tuple[list[Unit] | None, str]:
        """Search and, on success, commit S(V; t1..tk). Returns (the victim units V or None, why not)."""
        chosen: list[Unit] = []
        last_refusal = ""
        for i in range(1, len(self.tasks) + 1):
            outcome = self.valid(chosen, i)
            if outcome.valid:
                continue
            last_refusal = outcome.refusal
            offer = self._best_offer(chosen, pool, i)
            if offer is None:
                self._undo_applied()
                return None, last_refusal
            chosen = chosen + offer.units
        final_key = _key(chosen, len(self.tasks))
        if self._applied is not None and self._applied[0] == final_key:
            final = self._outcomes[final_key]  # already applied: the very scenario to commit
        else:
            self._undo_applied()
            final = self.scenario(chosen, self.tasks)
        self._applied = None
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


class ReplacementWatch:
    """Asked after each victim is placed again (``place_all``'s ``give_up``): True once the victims
    moved so far make the scenario invalid whatever the rest do. Moved victims stay moved, and the
    end's ``moved`` and ``evicted + moved`` are supersets of what is seen here, so

        len(moved so far) > move_limit          =>  the moves refusal (consolidate's budget left)
        share(moved so far) / gained > max_ratio  =>  the ratio refusal (share only grows with its set)

    (with the same float formula as the end's ratio). With ``moves_only`` a victim that finds no node
    ends the scenario too: an evicted victim is refused."""

    def __init__(self, search: VictimSearch) -> None:
        self.search = search
        self.phase = search.session.snapshot.state.task_phase
        self.limit = search.rules.move_limit()
        self.moved: list[int] = []
        self.refusal = ""

    def __call__(self, t: int) -> bool:
        if self.phase[t] != PIPELINED:
            return False  # back on its own node: not moved
        self.moved.append(t)
        if self.limit is not None and len(self.moved) > self.limit:
            self.refusal = f"more than {self.limit} moves"
            return True
        search = self.search
        disrupted = search.dominant_share(self.moved)
        gained = search.gained
        ratio = disrupted / gained if gained > 0 else (0.0 if disrupted == 0 else float("inf"))
        if ratio > search.max_ratio:
            self.refusal = f"eviction ratio above {search.max_ratio:g} already"
            return True
        return False


ScenarioKey = tuple[frozenset[tuple[int, int]], int]  # (the victim units as (job, sub), i)


def _key(units: Sequence[Unit], i: int) -> ScenarioKey:
    return frozenset([(u.job, u.sub) for u in units]), i
