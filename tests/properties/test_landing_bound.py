"""Consolidate refuses an offer whose victims cannot all land again without playing its scenario
(actions/victims/landing.py): every offer so refused is invalid when played, and a cycle decides and
explains the same as with every offer played."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import event, given, settings
from hypothesis import strategies as st

from loadmaster.actions.victims import search as search_module
from loadmaster.actions.victims.landing import LandingBound
from loadmaster.core.model import Cluster, SchedulerConfig
from loadmaster.cycle import CyclePlan, run_cycle
from tests.properties.strategies import (
    FRAGMENTS,
    assert_same_cycle,
    fragmented_nodes,
    running_jobs,
    waiting_jobs,
)


@st.composite
def crowded(draw: st.DrawFn) -> Cluster:
    """Nodes filled by elastic jobs spread over several nodes (whole-job units and task units; a node
    selector on some), and pending elastic jobs (one task searched at a time) larger than most
    fragments, with small moves budgets and ratios: offers whose victims land, and offers whose
    victims cannot (no room elsewhere, too many moves, too large a share)."""
    nodes = fragmented_nodes(draw, 2, 5)
    jobs = running_jobs(draw, nodes, FRAGMENTS, jobs=5, tasks=6, elastic_minimum=True)
    jobs += waiting_jobs(draw, largest=3, selectors=({}, {}, {"zone": "z0"}), drawn_minimum=False)
    config = SchedulerConfig(
        actions=("allocate", "consolidate"),
        max_consolidation_moves=draw(st.integers(1, 4)),
        max_eviction_ratio=draw(st.sampled_from([0.3, 0.5, 1.0, 4.0, 100.0])),
    )
    return Cluster(tuple(nodes), tuple(jobs), (), config)


def every_offer_played(cluster: Cluster) -> CyclePlan:
    with patch.object(search_module.LandingBound, "of", lambda *_: None):
        return run_cycle(cluster)


@settings(max_examples=400)
@given(crowded())
def test_an_offer_refused_by_the_landing_bound_is_invalid_when_played_and_the_cycle_is_the_same(
    cluster: Cluster,
) -> None:
    refused: list[bool] = []
    original_valid, original_cannot_land = search_module.VictimSearch.valid, LandingBound.cannot_land

    def recording(self, victims):  # type: ignore[no-untyped-def]
        found = original_cannot_land(self, victims)
        refused.append(found)
        return found

    def checked(self, units, i, validity_only=False):  # type: ignore[no-untyped-def]
        outcome = original_valid(self, units, i, validity_only)
        if refused and refused[-1] and outcome.cut_short:
            refused.append(False)  # (checked once)
            landing, self.landing = self.landing, None
            whole = original_valid(self, units, i)  # the scenario played whole
            self.landing = landing
            assert whole.placed and not whole.valid, whole
            event(f"refused offer played: {whole.refusal.split(' ')[0]}")
        return outcome

    with (
        patch.object(LandingBound, "cannot_land", recording),
        patch.object(search_module.VictimSearch, "valid", checked),
    ):
        fast = run_cycle(cluster)
    plain = every_offer_played(cluster)
    event("an offer refused without a play" if any(refused) else "none refused")
    event("moves made" if any(d.kind == "move" for d in plain.decisions) else "no move")
    assert_same_cycle(fast, plain)
