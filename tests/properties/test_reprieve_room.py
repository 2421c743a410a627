"""The reprieve of a node's offer worked out on free room (actions/victims/reprieve_room.py) keeps the
units the plays keep: a cycle decides and explains the same as with every ``placeable`` played."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import event, given, settings
from hypothesis import strategies as st

from loadmaster.actions.victims import search as search_module
from loadmaster.actions.victims.reprieve_room import ReprieveRoom
from loadmaster.core.model import Cluster, SchedulerConfig
from loadmaster.cycle import run_cycle
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
