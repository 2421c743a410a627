"""The victim index kept incrementally equals the index rebuilt from scratch; its walk visits nodes in
the search's bound order; the resource-fit shortcut never rules out a scenario that would place."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.actions.placing import place_all
from loadmaster.actions.victims.fit import FitBound
from loadmaster.actions.victims.index import Entry, VictimIndex, entries_of
from loadmaster.actions.victims.units import (
    DominantShare,
    Unit,
    ready_allocatable,
    share,
    tasks_of,
    units_of_job,
)
from loadmaster.core.columns.snapshot import BOUND, PENDING
from loadmaster.core.model import Cluster
from loadmaster.session import Session
from tests.properties.strategies import clusters

SETTINGS = settings(max_examples=100)


def preempt_like(session: Session) -> tuple[Callable[[int, int], bool], Callable[[int], int]]:
    jobs = session.snapshot.jobs

    def is_victim_job(preemptor: int, victim: int) -> bool:
        return jobs[victim].preemptible and jobs[victim].priority < jobs[preemptor].priority

    return is_victim_job, lambda j: jobs[j].priority


def from_scratch(
    session: Session, accepts: Callable[[int], bool]
) -> tuple[list[Entry], dict[int, list[Unit]]]:
    units = [u for v in range(len(session.snapshot.jobs)) if accepts(v) for u in units_of_job(session, v)]
    on_node: dict[int, list[Unit]] = {}
    for u in units:
        for n in u.nodes:
            on_node.setdefault(n, []).append(u)
    return sorted(e for u in units for e in entries_of(u)), on_node


@SETTINGS
@given(clusters(max_jobs=10), st.data())
def test_the_index_after_evictions_equals_the_index_built_from_scratch(
    cluster: Cluster, data: st.DataObject
) -> None:
    session = Session.open(cluster)
    is_victim_job, key = preempt_like(session)
    index = VictimIndex(session, is_victim_job, key)
    preemptors = list(range(len(cluster.jobs)))
    pools = {j: index.pool(j) for j in data.draw(st.lists(st.sampled_from(preemptors), max_size=3))}
    phase = session.snapshot.state.task_phase
    for _ in range(data.draw(st.integers(1, 3))):
        running = [t for t in session.snapshot.input_running_tasks.tolist() if phase[t] == BOUND]
        if not running:
            break
        gone = data.draw(st.lists(st.sampled_from(sorted(running)), min_size=1, max_size=3, unique=True))
        for t in gone:
            session.statement.evict(t, "test", "")
        session.commit()
        index.refresh(int(session.snapshot.task_job[t]) for t in gone)
    for j, pool in pools.items():
        entries, on_node = from_scratch(session, partial(is_victim_job, j))
        assert pool.entries == entries
        for n, units in on_node.items():
            assert index.on(n, pool, preemptor=-1, taken=set()) == units


@SETTINGS
@given(clusters(max_jobs=10), st.data())
def test_pools_first_asked_for_between_evictions_hold_what_their_jobs_offer_then(
    cluster: Cluster, data: st.DataObject
) -> None:
    # A job's units are made when a pool first takes it in: a pool asked for after evictions, beside
    # pools asked for before, must hold the units as they are then, and every pool stay in step.
    session = Session.open(cluster)
    is_victim_job, key = preempt_like(session)
    index = VictimIndex(session, is_victim_job, key)
    jobs = st.integers(0, len(cluster.jobs) - 1)
    pools = {}
    phase = session.snapshot.state.task_phase
    for _ in range(data.draw(st.integers(1, 4))):
        for j in data.draw(st.lists(jobs, max_size=2)):
            pools[j] = index.pool(j)
        running = [t for t in session.snapshot.input_running_tasks.tolist() if phase[t] == BOUND]
        if running:
            gone = data.draw(st.lists(st.sampled_from(sorted(running)), max_size=3, unique=True))
            for t in gone:
                session.statement.evict(t, "test", "")
            session.commit()
            index.refresh(int(session.snapshot.task_job[t]) for t in gone)
    for j, pool in pools.items():
        entries, on_node = from_scratch(session, partial(is_victim_job, j))
        assert pool.entries == entries
        for n in range(session.snapshot.n_nodes):
            assert index.on(n, pool, preemptor=-1, taken=set()) == on_node.get(n, [])


@SETTINGS
@given(clusters(max_jobs=10), st.data())
def test_the_walk_visits_nodes_by_their_best_single_unit_then_name(
    cluster: Cluster, data: st.DataObject
) -> None:
    session = Session.open(cluster)
    is_victim_job, key = preempt_like(session)
    index = VictimIndex(session, is_victim_job, key)
    preemptor = data.draw(st.integers(0, len(cluster.jobs) - 1))
    # an index whose pool has made nothing yet: the checks make only what they read
    lazy = VictimIndex(session, is_victim_job, key)
    lazy_pool = lazy.pool(preemptor)
    lazy_has_candidates = lazy.has_candidates(lazy_pool, preemptor)
    pool = index.pool(preemptor)
    assert pool.entries == sorted(pool.entries)  # made whole on first use
    candidates = [
        u for v in index.candidates if v != preemptor and pool.is_member(v) for u in index.units_of(v)
    ]
    assert lazy_has_candidates == index.has_candidates(pool, preemptor) == bool(candidates)
    taken = set(
        data.draw(st.lists(st.sampled_from([(u.job, u.sub) for u in candidates]))) if candidates else set()
    )
    left = [u for u in candidates if (u.job, u.sub) not in taken]
    nodes = {n for u in left for n in u.nodes}
    expected = sorted((min(u.solo_key for u in left if n in u.nodes), n) for n in nodes)
    assert list(index.walk(pool, preemptor, taken)) == expected


@SETTINGS
@given(clusters(max_jobs=10), st.data())
def test_the_fit_bound_never_rules_out_a_scenario_that_places(cluster: Cluster, data: st.DataObject) -> None:
    session = Session.open(cluster)
    phase = session.snapshot.state.task_phase
    pending = [t for t in range(session.snapshot.n_tasks) if phase[t] == PENDING]
    units = [u for v in range(len(cluster.jobs)) for u in units_of_job(session, v)]
    if not pending:
        return
    prefix = data.draw(st.lists(st.sampled_from(pending), min_size=1, max_size=3, unique=True))
    chosen = data.draw(st.lists(st.sampled_from(units), unique_by=lambda u: (u.job, u.sub))) if units else []
    index = VictimIndex(session, lambda *_: True, lambda j: j)
    bound = FitBound(session, prefix, index.input_node, index.needs)
    checkpoint = session.statement.checkpoint()
    for t in tasks_of(chosen):
        session.statement.evict(t, "test", "")
    placed = not place_all(session, prefix, "test", pipeline_only=True)
    session.statement.rollback(checkpoint)
    if placed:
        assert bound.may_place(chosen, prefix)


@SETTINGS
@given(clusters(max_jobs=10), st.data())
def test_the_fit_bound_over_many_victims_as_vectors_says_what_it_says_over_few(
    cluster: Cluster, data: st.DataObject
) -> None:
    session = Session.open(cluster)
    phase = session.snapshot.state.task_phase
    pending = [t for t in range(session.snapshot.n_tasks) if phase[t] == PENDING]
    units = [u for v in range(len(cluster.jobs)) for u in units_of_job(session, v)]
    if not pending or not units:
        return
    prefix = data.draw(st.lists(st.sampled_from(pending), min_size=1, max_size=3, unique=True))
    chosen = data.draw(st.lists(st.sampled_from(units), min_size=1, unique_by=lambda u: (u.job, u.sub)))
    index = VictimIndex(session, lambda *_: True, lambda j: j)
    few = FitBound(session, prefix, index.input_node, index.needs)
    many = FitBound(session, prefix, index.input_node, index.needs)
    many.FEW_VICTIMS = 0  # every V takes the vector path
    assert many.may_place(chosen, prefix) == few.may_place(chosen, prefix)


@SETTINGS
@given(clusters(max_jobs=10), st.data())
def test_the_dominant_share_equals_the_plain_formula_to_the_last_bit(
    cluster: Cluster, data: st.DataObject
) -> None:
    session = Session.open(cluster)
    tasks = data.draw(st.lists(st.integers(0, session.snapshot.n_tasks - 1), max_size=12, unique=True))
    assert DominantShare(session)(tasks) == share(session, tasks, ready_allocatable(session))
