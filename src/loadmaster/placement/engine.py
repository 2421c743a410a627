"""The placement engine: filter -> score -> select for one task against the snapshot's working state.

* feasible = AND of the applicable filters (static ones cached per equivalence class);
* total = the profile's weighted sum of the applicable scorers (profile.py);
* select = argmax over feasible nodes; nodes are sorted by name, so ties go to the first name.
  A task whose ``previous_node`` is feasible stays there, with every profile (stickiness).

``choose_many`` places a run of identical tasks. When every applicable scorer and filter is *local*
(a placement on node n changes only node n's feasibility and score), it evaluates all nodes once and
then re-evaluates only the node just used: O(N) once plus O(1) numpy calls per task, instead of
O(N) per task. Otherwise it falls back to one full evaluation per task. Both give identical results.
Given ``apply_run`` and plugins that can evaluate copies (fill.py), with nothing releasing, it
computes the whole run's nodes in one vector pass and records them with one ``apply_run`` call.

Per equivalence class, what does not depend on the state is worked out once (``ClassPlan``: the
task context, dynamic filters, static mask, locality, fill support), and a local class's masked
totals are kept across calls, refreshed only at the nodes changed since (totals_cache.py).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from loadmaster.core.columns.snapshot import NO_NODE, ClusterSnapshot
from loadmaster.core.working.node_changes import NodeChanges
from loadmaster.placement.context import TaskContext
from loadmaster.placement.equivalence import (
    JOB_NAME_SENSITIVE,
    JOB_SENSITIVE,
    TASK_SENSITIVE,
    class_key,
    static_key,
)
from loadmaster.placement.extension_points import (
    ALL,
    BoolArray,
    Cols,
    CopiesFilter,
    CopiesScorer,
    Filter,
    IntArray,
    Rejection,
    RunBoundScorer,
    Scorer,
    implements,
)
from loadmaster.placement.fill import fill_nodes
from loadmaster.placement.plugins.scorers.node_availability import fits_idle
from loadmaster.placement.profile import Profile, profile_named
from loadmaster.placement.registry import ORDERED_FILTERS
from loadmaster.placement.task_runs import Runs, runs_of
from loadmaster.placement.totals_cache import TotalsCache

INFEASIBLE = -1  # below every total (totals are >= 0)


@dataclass(frozen=True, slots=True)
class Choice:
    node: int  # NO_NODE when nothing is feasible
    fits_idle: bool  # True: bind now; False: must be Pipelined onto releasing resources

    @property
    def placed(self) -> bool:
        return self.node != NO_NODE


NOWHERE = Choice(NO_NODE, False)


@dataclass(slots=True)
class ClassPlan:
    """What a class's placement needs that the working state cannot change, worked out once."""

    ctx: TaskContext  # of the class's first task: ``t`` and ``task`` are set to the task at hand
    profile: Profile
    dynamic: list[Filter]
    static: BoolArray
    local: bool
    cacheable: bool  # local, and no volume claims (pools may be shared by several nodes)
    fill_filters: list[CopiesFilter] | None  # None: some dynamic filter cannot count copies


class PlacementEngine:
    def __init__(self, snapshot: ClusterSnapshot, profile: Profile) -> None:
        self.snapshot = snapshot
        self.default_profile = profile
        self._static_masks: dict[Hashable, BoolArray] = {}
        self._classes: dict[int, int] = {}  # tasks never change within a snapshot
        self._class_ids: dict[Hashable, int] = {}
        self._job_runs: dict[int, tuple[Runs, list[int | None]]] = {}  # job -> (runs, class of each run)
        self._job_class: dict[int, tuple[str, Hashable]] = {}  # (profile name, job if it matters)
        self._task_job: list[int] | None = None  # made on the first class lookup
        # A job may name its own profile (the control plane's per-service placement modes).
        self._profiles = {profile.name: profile}
        for name in snapshot.job_profiles:
            if name not in self._profiles:
                self._profiles[name] = profile_named(name, snapshot.config)
        # Whether a profile scores by job (then a task's class includes its job: its index, or its name
        # when every job of a name counts as one service), once per profile.
        self._job_sensitive = {
            name: any(s.name in JOB_SENSITIVE for s, _ in p.scorers) for name, p in self._profiles.items()
        }
        self._job_name_sensitive = {
            name: any(s.name in JOB_NAME_SENSITIVE for s, _ in p.scorers)
            for name, p in self._profiles.items()
        }
        self._settled_by_class = {
            name: all(s.name not in TASK_SENSITIVE for s, _ in p.scorers)
            for name, p in self._profiles.items()
        }
        self._plans: dict[int, ClassPlan] = {}
        self._totals = TotalsCache(NodeChanges.of(snapshot), snapshot.n_nodes)

    def profile_of(self, t: int) -> Profile:
        name = self.snapshot.jobs[int(self.snapshot.task_job[t])].profile
        return self._profiles[name] if name else self.default_profile

    def settled_by_class(self, t: int) -> bool:
        """Whether task t's node choices depend only on its class and the working state: no scorer of its
        profile reads the task itself (``TASK_SENSITIVE``: the rendezvous hash of its name). What the
        memos of failed placements and searches (``actions/no_room.py``, ``actions/victims/``) rest on."""
        name = self.snapshot.jobs[int(self.snapshot.task_job[t])].profile
        return self._settled_by_class[name or self.default_profile.name]

    def class_of(self, t: int) -> int:
        """The task's equivalence class, as a small integer (identical tasks share masks, scores and
        explanations): equal class keys get the same number, so comparing and hashing classes is cheap.
        A key is worked out once per run of tasks with equal placement fields (``task_runs.py``), when
        the first task of the run is asked about: numbers are handed out in the same order as task by
        task."""
        cached = self._classes.get(t)
        if cached is None:
            if self._task_job is None:  # a list indexes faster than the array, once classes are many
                self._task_job = self.snapshot.task_job.tolist()
            j = self._task_job[t]
            if len(self.snapshot.job_tasks[j]) == 1:  # one task: its own key, with no run to look up
                cached = self._classes[t] = self._class_ids.setdefault(
                    self._class_key(t), len(self._class_ids)
                )
                return cached
            ends, ids = self._runs_of(j)
            run = bisect.bisect_right(ends, t - self.snapshot.job_tasks[j].start) if len(ends) > 1 else 0
            cached = ids[run]
            if cached is None:
                key = self._class_key(t)
                cached = ids[run] = self._class_ids.setdefault(key, len(self._class_ids))
            self._classes[t] = cached
        return cached

    def class_groups(self, j: int, tasks: Sequence[int]) -> list[list[int]]:
        """``tasks`` (some of job j's, ascending) as ``groupby(tasks, class_of)`` groups them: cut where
        the class changes. The job's runs (``task_runs.py``) say where that can happen, so a class is
        asked once per run rather than once per task (an elastic job's thousands of Pending extras,
        every cycle)."""
        if not tasks:
            return []
        ends, _ = self._runs_of(j)
        if len(ends) == 1:
            return [list(tasks)]
        array = np.asarray(tasks, dtype=np.int64)
        run = np.searchsorted(np.asarray(ends), array - self.snapshot.job_tasks[j].start, side="right")
        groups: list[list[int]] = []
        last = None
        for chunk in np.split(array, np.flatnonzero(np.diff(run)) + 1):
            members: list[int] = chunk.tolist()
            cls = self.class_of(members[0])
            if cls == last:
                groups[-1].extend(members)
            else:
                groups.append(members)
                last = cls
        return groups

    def one_class_job(self, j: int) -> bool:
        """Whether every task of job j is of one class (its tasks' placement fields are all equal)."""
        return len(self._runs_of(j)[0]) == 1

    def _runs_of(self, j: int) -> tuple[Runs, list[int | None]]:
        """Job j's runs (``task_runs.py``) and the class of each run worked out so far."""
        found = self._job_runs.get(j)
        if found is None:
            ends = runs_of(self.snapshot.jobs[j])
            found = self._job_runs[j] = (ends, [None] * len(ends))
        return found

    def _class_key(self, t: int) -> Hashable:
        if self._task_job is None:  # a list indexes faster than the array, once classes are many
            self._task_job = self.snapshot.task_job.tolist()
        j = self._task_job[t]
        job = self._job_class.get(j)
        if job is None:
            name = self.snapshot.jobs[j].profile or self.default_profile.name
            identity: Hashable = j if self._job_sensitive[name] else None
            if self._job_name_sensitive[name]:
                identity = self.snapshot.jobs[j].name
            job = self._job_class[j] = (name, identity)
        return (job[0], class_key(self.snapshot.tasks[t], job[1]))

    def context(self, t: int) -> TaskContext:
        return TaskContext.of(self.snapshot, t)

    def plan_of(self, t: int) -> ClassPlan:
        """The class plan of task t, its context pointed at t."""
        key = self.class_of(t)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._make_plan(t)
        plan.ctx.t, plan.ctx.task = t, self.snapshot.tasks[t]
        return plan

    def _make_plan(self, t: int) -> ClassPlan:
        ctx = self.context(t)
        applicable = self.filters_for(ctx)
        dynamic = [f for f in applicable if f.dynamic]
        local = self.is_local(ctx)
        copying = all(implements(type(f), CopiesFilter) for f in dynamic)
        fill_filters = [cast(CopiesFilter, f) for f in dynamic] if copying else None
        return ClassPlan(
            ctx, self.profile_of(t), dynamic, self._static_mask(ctx, applicable), local,
            local and not ctx.task.volumes, fill_filters,
        )  # fmt: skip

    def _scorers(self, plan: ClassPlan) -> list[tuple[Scorer, int]]:
        return [(s, w) for s, w in plan.profile.scorers if s.applies(plan.ctx)]

    def _masked(self, plan: ClassPlan, scorers: list[tuple[Scorer, int]]) -> IntArray:
        """Every node's total, INFEASIBLE where the task does not fit (cached for local classes: the
        caller may write a node's fresh value into it)."""
        ctx, denominator = plan.ctx, plan.profile.denominator

        def evaluate(cols: Cols) -> IntArray:
            # what feasible() and total() give, without looking up the class's plugins again
            mask = self._plan_feasible(plan, cols)
            total = np.zeros(mask.size, dtype=np.int64)
            for s, w in scorers:
                total += w * s.score(ctx, cols, mask)
            if denominator != 1:
                total //= denominator
            return np.where(mask, total, INFEASIBLE)

        if not plan.cacheable:
            return evaluate(ALL)
        key = (self.class_of(ctx.t), tuple(s.name for s, _ in scorers))
        return self._totals.get(key, evaluate)

    def _plan_feasible(self, plan: ClassPlan, cols: Cols = ALL) -> BoolArray:
        """``feasible(plan.ctx, cols)`` from the class's static mask and dynamic filters."""
        mask = plan.static[cols].copy()
        for f in plan.dynamic:
            if mask.any():
                mask &= f.mask(plan.ctx, cols)
        return mask

    def _copies_scorers(self, scorers: list[tuple[Scorer, int]]) -> list[tuple[CopiesScorer, int]] | None:
        if not all(implements(type(s), CopiesScorer) for s, _ in scorers):
            return None
        return [(cast(CopiesScorer, s), w) for s, w in scorers]

    def filters_for(self, ctx: TaskContext) -> list[Filter]:
        return [f for f in ORDERED_FILTERS if f.applies(ctx)]

    def _static_mask(self, ctx: TaskContext, applicable: list[Filter]) -> BoolArray:
        key = static_key(ctx.task, ctx.gpu)
        static = self._static_masks.get(key)
        if static is None:
            static = np.ones(self.snapshot.n_nodes, dtype=np.bool_)
            for f in applicable:
                if not f.dynamic:
                    static &= f.mask(ctx, ALL)
            self._static_masks[key] = static
        return static

    def feasible(self, ctx: TaskContext, cols: Cols = ALL) -> BoolArray:
        applicable = self.filters_for(ctx)
        mask = self._static_mask(ctx, applicable)[cols].copy()
        for f in applicable:
            if f.dynamic and mask.any():
                mask &= f.mask(ctx, cols)
        return mask

    def scores(
        self, ctx: TaskContext, feasible: BoolArray, cols: Cols = ALL
    ) -> list[tuple[str, int, IntArray]]:
        """(scorer name, integer weight, 0..100 scores) for each applicable scorer of the profile."""
        profile = self.profile_of(ctx.t)
        return [(s.name, w, s.score(ctx, cols, feasible)) for s, w in profile.scorers if s.applies(ctx)]

    def total(self, ctx: TaskContext, feasible: BoolArray, cols: Cols = ALL) -> IntArray:
        size = self.snapshot.n_nodes if isinstance(cols, slice) else len(cols)
        total = np.zeros(size, dtype=np.int64)
        for _, weight, score in self.scores(ctx, feasible, cols):
            total += weight * score
        denominator = self.profile_of(ctx.t).denominator
        if denominator != 1:
            total //= denominator
        return total

    def _sticky_node(self, ctx: TaskContext, feasible: BoolArray) -> int:
        previous = ctx.task.previous_node
        n = self.snapshot.node_index.get(previous, NO_NODE) if previous else NO_NODE
        return n if n != NO_NODE and feasible[n] else NO_NODE

    def choose(self, t: int) -> Choice:
        plan = self.plan_of(t)
        if plan.local:  # no previous node to stick to; totals cached and refreshed where changed
            masked = self._masked(plan, self._scorers(plan))
            n = int(np.argmax(masked))
            return NOWHERE if masked[n] == INFEASIBLE else Choice(n, self._fits_idle_at(plan.ctx, n))
        ctx, feasible = plan.ctx, self._plan_feasible(plan)
        if not feasible.any():
            return NOWHERE
        n = self._sticky_node(ctx, feasible)
        if n == NO_NODE:
            n = int(np.argmax(np.where(feasible, self.total(ctx, feasible), INFEASIBLE)))
        return Choice(n, self._fits_idle_at(ctx, n))

    def _fits_idle_at(self, ctx: TaskContext, n: int) -> bool:
        if self.snapshot.state.releasing_count == 0:
            return True  # nothing is being released, so feasible means it fits idle resources
        return bool(fits_idle(ctx, np.array([n]))[0])

    def is_local(self, ctx: TaskContext) -> bool:
        """True when a placement on node n can change only node n's feasibility and total."""
        if ctx.task.previous_node or any(
            f.dynamic and f.category == Rejection.TOPOLOGY for f in self.filters_for(ctx)
        ):
            return False
        scorers = self.profile_of(ctx.t).scorers
        return all(not s.normalized and s.name not in TASK_SENSITIVE for s, _ in scorers if s.applies(ctx))

    def choose_many(
        self,
        tasks: Sequence[int],
        apply: Callable[[int, Choice], bool],
        apply_run: Callable[[Sequence[int], IntArray], None] | None = None,
    ) -> None:
        """Choose a node for each of several identical tasks in order; ``apply(t, choice)`` records each
        choice in the working state (placements only, never evictions) and returns False to stop early
        (e.g. a gang gave up). ``apply_run(tasks, nodes)``, when given, may instead record a whole run
        of choices that all fit idle resources at once (same effect as ``apply`` for each in order);
        ``apply`` then still hears of the first task that found no node."""
        if not tasks:
            return
        if self.snapshot.n_nodes == 0:  # nothing to choose from (and argmax of nothing is an error)
            apply(tasks[0], NOWHERE)
            return
        plan = self.plan_of(tasks[0])
        if not plan.local:
            for t in tasks:
                if not apply(t, self.choose(t)):
                    return
            return
        stopped = False

        def tracked(t: int, choice: Choice) -> bool:
            nonlocal stopped
            kept = apply(t, choice)
            stopped = stopped or not kept or not choice.placed
            return kept

        start = 0
        while start < len(tasks) and not stopped:
            run = tasks[start : start + self._steady_run(plan, len(tasks) - start)]
            self._choose_run(plan, run, tracked, apply_run)
            start += len(run)

    def _steady_run(self, plan: ClassPlan, count: int) -> int:
        """How many of ``count`` identical tasks in a row keep the scorers that apply to the first: all of
        them, unless a scorer's ``applies`` depends on the whole cluster (``RunBoundScorer``)."""
        steady = count
        for scorer, _ in plan.profile.scorers:
            if implements(type(scorer), RunBoundScorer):
                steady = min(steady, cast(RunBoundScorer, scorer).steady_for(plan.ctx, count))
        return max(steady, 1)

    def _choose_run(
        self,
        plan: ClassPlan,
        tasks: Sequence[int],
        apply: Callable[[int, Choice], bool],
        apply_run: Callable[[Sequence[int], IntArray], None] | None,
    ) -> None:
        """``choose_many`` for a run whose tasks all see the same scorers."""
        scorers = self._scorers(plan)
        if apply_run is not None and self._fill(plan, scorers, tasks, apply, apply_run):
            return
        # Everything that depends only on the class is computed once for the whole run.
        ctx, static, dynamic = plan.ctx, plan.static, plan.dynamic
        masked = self._masked(plan, scorers)
        denominator = plan.profile.denominator
        last = len(tasks) - 1
        for i, t in enumerate(tasks):
            n = int(np.argmax(masked))
            if masked[n] == INFEASIBLE:
                choice = NOWHERE
            else:
                ctx.t, ctx.task = t, self.snapshot.tasks[t]
                choice = Choice(n, self._fits_idle_at(ctx, n))
            if not apply(t, choice) or not choice.placed:
                return
            if i == last:
                return  # nothing reads masked[n] again here (a cached entry re-evaluates logged nodes)
            col = np.array([n])
            still = np.array([static[n]])
            for f in dynamic:
                if still[0]:
                    still &= f.mask(ctx, col)
            if still[0]:
                total = sum(w * int(s.score(ctx, col, still)[0]) for s, w in scorers)
                masked[n] = total // denominator
            else:
                masked[n] = INFEASIBLE

    def _fill(
        self,
        plan: ClassPlan,
        scorers: list[tuple[Scorer, int]],
        tasks: Sequence[int],
        apply: Callable[[int, Choice], bool],
        apply_run: Callable[[Sequence[int], IntArray], None],
    ) -> bool:
        """The fill path (fill.py), when its plugins support it; False leaves the run untouched."""
        if self.snapshot.state.releasing_count or plan.fill_filters is None:
            return False  # with nothing releasing, feasible means fits idle: every choice binds
        copies_scorers = self._copies_scorers(scorers)
        if copies_scorers is None:
            return False
        remaining = tasks
        while remaining:
            masked = self._masked(plan, scorers)
            if int(masked.max()) == INFEASIBLE:  # no node takes a copy: fill_nodes would pick none
                apply(remaining[0], NOWHERE)
                return True
            nodes, exhausted = fill_nodes(
                plan.ctx, masked, len(remaining), INFEASIBLE, plan.fill_filters, copies_scorers,
                plan.profile.denominator,
            )  # fmt: skip
            if nodes.size:
                apply_run(remaining[: nodes.size], nodes)
            if exhausted:
                if nodes.size < len(remaining):
                    apply(remaining[nodes.size], NOWHERE)
                return True
            remaining = remaining[nodes.size :]
        return True
