"""The victim search (indexed candidates, bound-ordered walk, resource-fit shortcut, cached and
reused scenarios) chooses exactly what the plain exhaustive reference chooses."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import replace
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.core.model import Cluster, SchedulerConfig
from loadmaster.cycle import CyclePlan, run_cycle
from tests.properties.strategies import clusters
from tests.victims.reference_search import reference_evicting_action

SETTINGS = settings(max_examples=150)
EVICTING = ("preempt", "reclaim", "consolidate")


def reference_cycle(cluster: Cluster) -> CyclePlan:
    with ExitStack() as stack:
        for action in EVICTING:
            stack.enter_context(
                patch(f"loadmaster.actions.{action}.run_evicting_action", reference_evicting_action)
            )
        return run_cycle(cluster)


def assert_same_plan(cluster: Cluster) -> None:
    fast, slow = run_cycle(cluster), reference_cycle(cluster)
    assert fast.tasks == slow.tasks
    assert fast.decisions == slow.decisions
    assert fast.explanations == slow.explanations


@SETTINGS
@given(clusters(with_queues=True), st.sampled_from([0.5, 2.0, 100.0]))
def test_every_action_evicts_and_moves_what_the_exhaustive_search_would(
    cluster: Cluster, ratio: float
) -> None:
    assert_same_plan(replace(cluster, config=replace(cluster.config, max_eviction_ratio=ratio)))


@SETTINGS
@given(clusters(max_nodes=4, max_jobs=10), st.sampled_from(EVICTING), st.sampled_from([1.0, 2.0, 100.0]))
def test_one_evicting_action_alone_matches_the_exhaustive_search(cluster: Cluster, action: str,
                                                                 ratio: float) -> None:  # fmt: skip
    config = SchedulerConfig(actions=(action,), max_eviction_ratio=ratio)
    assert_same_plan(replace(cluster, config=config))
