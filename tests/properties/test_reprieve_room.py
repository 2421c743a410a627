"""The reprieve of a node's offer worked out on free room (actions/victims/reprieve_room.py) keeps the
units the plays keep: a cycle decides and explains the same as with every ``placeable`` played."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import event, given, settings
from hypothesis import strategies as st

from loadmaster.actions.victims import search as search_module
from loadmaster.actions.victims.index import VictimIndex
from loadmaster.actions.victims.reprieve_room import ReprieveRoom
from loadmaster.actions.victims.units import Unit
from loadmaster.core.model import Cluster, Job, SchedulerConfig, Task
from loadmaster.cycle import run_cycle
from loadmaster.session import Session
from tests.properties.strategies import (
    FRAGMENTS,
    assert_same_cycle,
    fragmented_nodes,
    running_jobs,
    waiting_jobs,
)


@st.composite
def crowded(draw: st.DrawFn) -> Cluster:
    """Nodes filled by elastic jobs spread over several nodes (whole-job units and task units, some
    static filters: a cordoned node, a node selector), and pending elastic jobs larger than most
    fragments: every offer has a reprieve to work out."""
    nodes = fragmented_nodes(draw, 2, 5, cordon=True)
    jobs = running_jobs(draw, nodes, FRAGMENTS, jobs=5, tasks=6, elastic_minimum=True)
    jobs += waiting_jobs(draw, largest=3, selectors=({}, {"zone": "z0"}))
    config = SchedulerConfig(
        actions=("allocate", "consolidate"),
        max_consolidation_moves=draw(st.integers(1, 6)),
        max_eviction_ratio=draw(st.sampled_from([1.0, 4.0, 100.0])),
    )
    return Cluster(tuple(nodes), tuple(jobs), (), config)


@settings(max_examples=300)
@given(crowded())
def test_a_cycle_decides_and_explains_the_same_with_the_reprieve_worked_out_on_free_room(
    cluster: Cluster,
) -> None:
    used: list[bool] = []
    original = ReprieveRoom.reprieve

    def counting(self, chosen, on_node, n):  # type: ignore[no-untyped-def]
        used.append(True)
        return original(self, chosen, on_node, n)

    with patch.object(ReprieveRoom, "reprieve", counting):
        fast = run_cycle(cluster)
    with patch.object(search_module.ReprieveRoom, "of", lambda *_: None):
        played = run_cycle(cluster)
    event("a reprieve worked out on room" if used else "no reprieve")
    event("moves made" if any(d.kind == "move" for d in played.decisions) else "no move")
    assert_same_cycle(fast, played)


@settings(max_examples=300)
@given(crowded())
def test_a_cycle_decides_and_explains_the_same_when_re_placing_victims_stops_once_a_scenario_is_invalid(
    cluster: Cluster,
) -> None:
    cut: list[str] = []
    original_scenario = search_module.VictimSearch.scenario
    original_valid = search_module.VictimSearch.valid

    def watching(self, units, prefix, reason="", validity_only=False):  # type: ignore[no-untyped-def]
        outcome = original_scenario(self, units, prefix, reason, validity_only)
        if outcome.cut_short:
            cut.append(outcome.refusal)
        return outcome

    def played_whole(self, units, i, validity_only=False):  # type: ignore[no-untyped-def]
        return original_valid(self, units, i)

    with patch.object(search_module.VictimSearch, "scenario", watching):
        fast = run_cycle(cluster)
    with patch.object(search_module.VictimSearch, "valid", played_whole):
        whole = run_cycle(cluster)
    event("a scenario cut short" if cut else "none cut short")
    for refusal in set(cut):
        event(f"cut short: {refusal.split(' ')[0]}")
    assert_same_cycle(fast, whole)


@st.composite
def many_fitting_nodes(draw: st.DrawFn) -> tuple[Cluster, int]:
    """Many nodes filled by jobs spread over several of them, and one pending task small enough to fit
    many nodes once their units are evicted: the reprieve's steps then decide most whole units on the
    count of fitting nodes alone (``_Room``'s pending columns)."""
    nodes = fragmented_nodes(draw, 6, 14)
    jobs = running_jobs(draw, nodes, FRAGMENTS, jobs=9, tasks=12, elastic_minimum=True)
    shape = draw(st.sampled_from(FRAGMENTS))
    jobs.append(Job("wait", (Task("wait-0", "wait", dict(shape)),)))
    return Cluster(tuple(nodes), tuple(jobs), (), SchedulerConfig()), len(jobs) - 1


def reprieve_by_the_formula(
    session: Session, t: int, index: VictimIndex, on_node: list[Unit]
) -> list[Unit] | None:
    """The module docstring's formula, unit by unit: placeable(V; t) = some node passes t's static
    filters and has free room plus V's tasks' requests (each once) >= t's request on t's rows."""
    snapshot = session.snapshot
    plan = session.engine.plan_of(t)
    rows = plan.ctx.fit_rows
    need = snapshot.task_request[rows, t][:, None]

    def placeable(units: list[Unit]) -> bool:
        room = snapshot.state.node_free[rows].copy()
        for x in {x for u in units for x in u.tasks}:
            room[:, index.input_node[x]] += snapshot.task_request[rows, x]
        return bool((plan.static & (room >= need).all(axis=0)).any())

    kept = list(on_node)
    if not placeable(kept):
        return None
    for unit in sorted(on_node, key=lambda u: u.importance):
        trial = [u for u in kept if u is not unit]
        if placeable(trial):
            kept = trial
    return kept


@settings(max_examples=300)
@given(many_fitting_nodes())
def test_the_reprieve_keeps_what_the_formula_keeps_unit_by_unit(drawn: tuple[Cluster, int]) -> None:
    cluster, j = drawn
    session = Session.open(cluster)
    snapshot = session.snapshot
    index = VictimIndex(session, lambda _, v: snapshot.jobs[v].preemptible, lambda _: ())
    t = snapshot.job_tasks[j][0]
    room = ReprieveRoom.of(session, t, index)
    assert room is not None  # CPU and memory only: the formula decides
    pool = index.pool(j)
    offers = 0
    for n in range(snapshot.n_nodes):
        on_node = index.on(n, pool, j, set())
        if on_node:
            offers += 1
            assert room.reprieve([], on_node, n) == reprieve_by_the_formula(session, t, index, on_node)
    event("offers worked out" if offers else "no offer")
