"""The rebalancer's pure cycle: EWMA, the nine gates, the order of candidates and destinations."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from loadmaster.controllers.rebalancing.pressure_ewma import PressureState, fold_one
from loadmaster.controllers.rebalancing.rebalance import MOVED, SKIPPED, rebalance
from tests.controllers.rebalance_builders import GIB, PlacedReplica, SampledNode, columns

STALE_AFTER_S = 90.0


def run_cycles(nodes, replicas, times, state=None):
    """Run one cycle at each of ``times`` with the same samples (re-stamped at each time)."""
    state = state or PressureState()
    result = ([], [], state)
    for now in times:
        for node in nodes:
            node.sampled_at = now
        node_cols, replica_cols = columns(nodes, replicas)
        result = rebalance(node_cols, replica_cols, result[2], now, stale_after_s=STALE_AFTER_S)
    return result


def hot_cluster(**replica_fields):
    nodes = [SampledNode("n1", cpu=0.95, memory=0.4), SampledNode("n2", cpu=0.2, memory=0.2)]
    replicas = [PlacedReplica("web-api-0", "n1", **replica_fields)]
    return nodes, replicas


def test_the_first_sample_sets_the_ewma_and_later_ones_move_it_by_the_time_constant() -> None:
    state = PressureState().aligned(("n1",))
    fold_one(state, "n1", 1.0, 0.5, 0.0)
    assert state.ewma[:, 0].tolist() == [1.0, 0.5]
    fold_one(state, "n1", 0.0, 0.5, 300.0)
    assert state.ewma[0, 0] == pytest.approx(math.exp(-1.0))
    fold_one(state, "n1", 0.0, 0.0, 300.0)  # not newer: already folded
    assert state.ewma[1, 0] == pytest.approx(0.5)


def test_a_hot_node_moves_a_replica_only_on_its_second_hot_cycle() -> None:
    nodes, replicas = hot_cluster()
    moves, events, state = run_cycles(nodes, replicas, [30.0])
    assert moves == [] and events == []
    moves, events, _ = run_cycles(nodes, replicas, [60.0], state)
    assert [(m.replica, m.src, m.dst) for m in moves] == [("web-api-0", "n1", "n2")]
    payload = events[0].payload
    assert events[0].type == MOVED
    assert payload["relief"] == pytest.approx(0.2) and payload["score"] == pytest.approx(0.19)
    assert payload["dominant"] == "cpu"
    assert payload["src_pressure_before"] == pytest.approx(0.95)
    assert payload["src_pressure_after"] == pytest.approx(0.75)
    assert payload["dst_pressure_after"] == pytest.approx(0.4)


def test_no_samples_at_all_give_no_events() -> None:
    nodes = [SampledNode("n1"), SampledNode("n2")]
    replicas = [PlacedReplica("web-api-0", "n1")]
    node_cols, replica_cols = columns(nodes, replicas)
    moves, events, _ = rebalance(node_cols, replica_cols, PressureState(), 60.0, stale_after_s=STALE_AFTER_S)
    assert (moves, events) == ([], [])


def test_a_stale_sample_leaves_its_node_out() -> None:
    nodes, replicas = hot_cluster()
    state = run_cycles(nodes, replicas, [30.0, 60.0][:1])[2]
    node_cols, replica_cols = columns(nodes, replicas)
    moves, events, _ = rebalance(node_cols, replica_cols, state, 30.0 + 91.0, stale_after_s=STALE_AFTER_S)
    assert (moves, events) == ([], [])


def test_a_small_imbalance_moves_nothing_and_says_nothing() -> None:
    nodes = [SampledNode("n1", cpu=0.95, memory=0.4), SampledNode("n2", cpu=0.72, memory=0.2)]
    moves, events, _ = run_cycles(nodes, [PlacedReplica("web-api-0", "n1")], [30.0, 60.0])
    assert (moves, events) == ([], [])


@pytest.mark.parametrize(
    ("replica_fields", "node_fields", "reason"),
    [
        pytest.param({"cpu": 0.5}, {}, "relief_floor", id="relief-below-ten-percent"),
        pytest.param({"bound_at": 0.0}, {}, "cooldown_replica", id="bound-nine-minutes-ago"),
        pytest.param({"cpu": 6.0}, {}, "dst_cap", id="destination-would-be-too-hot"),
        pytest.param({"memory": 6 * GIB}, {}, "dst_cap", id="memory-tips-the-destination-over"),
        pytest.param({}, {"can_receive": False}, "no_eligible_dst", id="destination-cannot-receive"),
        pytest.param({"node_selector": {"zone": "b"}}, {}, "anti_affinity", id="selector-refuses-n2"),
    ],
)
def test_a_refused_candidate_is_one_skip_with_its_reason(replica_fields, node_fields, reason) -> None:
    nodes, replicas = hot_cluster(**replica_fields)
    for key, value in node_fields.items():
        setattr(nodes[1], key, value)
    times = [510.0, 540.0] if reason == "cooldown_replica" else [30.0, 60.0]
    moves, events, _ = run_cycles(nodes, replicas, times)
    assert moves == []
    assert [(e.type, e.payload["reason"]) for e in events] == [(SKIPPED, reason)]
    assert events[0].payload["replica_id"] == "web-api-0"


def test_cpu_plus_memory_over_one_on_the_destination_is_resource_limits() -> None:
    nodes = [SampledNode("n1", cpu=0.95, memory=0.4), SampledNode("n2", cpu=0.5, memory=0.45)]
    moves, events, _ = run_cycles(nodes, [PlacedReplica("web-api-0", "n1", memory=1 * GIB)], [30.0, 60.0])
    assert moves == [] and events[0].payload["reason"] == "resource_limits"


def test_a_request_larger_than_what_is_free_on_the_destination_is_resource_limits() -> None:
    nodes, replicas = hot_cluster(cpu=3.5)
    replicas.append(PlacedReplica("db-pg-0", "n2", cpu=7.0, deployment="db", service="pg", movable=False))
    moves, events, _ = run_cycles(nodes, replicas, [30.0, 60.0])
    assert moves == [] and [e.payload["reason"] for e in events] == ["resource_limits"]


def test_spread_refuses_a_node_that_has_a_replica_of_the_service() -> None:
    nodes, replicas = hot_cluster(spread=True)
    replicas.append(PlacedReplica("web-api-1", "n2", spread=True, movable=False))
    moves, events, _ = run_cycles(nodes, replicas, [30.0, 60.0])
    assert moves == [] and [e.payload["reason"] for e in events] == ["anti_affinity"]


def test_a_node_that_just_received_a_move_is_in_cooldown_for_two_minutes() -> None:
    nodes, replicas = hot_cluster()
    replicas.append(PlacedReplica("web-api-1", "n1"))
    moves, _, state = run_cycles(nodes, replicas, [30.0, 60.0])
    assert [m.replica for m in moves] == ["web-api-0"]
    replicas[0].node, replicas[0].bound_at = "n2", 60.0
    moves, events, state = run_cycles(nodes, replicas, [90.0], state)
    assert moves == []
    assert [(e.payload["replica_id"], e.payload["reason"]) for e in events] == [
        ("web-api-1", "cooldown_node")
    ]
    moves, _, _ = run_cycles(nodes, replicas, [180.0], state)
    assert [m.replica for m in moves] == ["web-api-1"]


def test_no_movable_replica_on_the_source_is_one_no_candidate_skip() -> None:
    nodes, replicas = hot_cluster(movable=False)
    moves, events, _ = run_cycles(nodes, replicas, [30.0, 60.0])
    assert moves == []
    assert [(e.replica, e.payload["reason"], e.payload["src"]) for e in events] == [
        (None, "no_candidate", "n1")
    ]


def test_candidates_go_by_score_then_name_and_skips_come_before_the_move() -> None:
    nodes = [SampledNode("n1", cpu=0.95, memory=0.4), SampledNode("n2", cpu=0.2, memory=0.2)]
    replicas = [
        PlacedReplica("web-api-0", "n1", cpu=2.0),
        PlacedReplica("web-api-1", "n1", cpu=3.0, bound_at=50.0),  # best score, but in cooldown
        PlacedReplica("web-api-2", "n1", cpu=2.0),
    ]
    moves, events, _ = run_cycles(nodes, replicas, [30.0, 60.0])
    assert [(e.type, e.replica) for e in events] == [(SKIPPED, "web-api-1"), (MOVED, "web-api-0")]
    assert [m.replica for m in moves] == ["web-api-0"]


def test_the_destination_is_the_passing_node_with_the_lowest_pressure_after_ties_by_name() -> None:
    nodes = [
        SampledNode("n1", cpu=0.95, memory=0.4),
        SampledNode("n3", cpu=0.2, memory=0.2),
        SampledNode("n2", cpu=0.2, memory=0.2),
        SampledNode("n4", cpu=0.1, memory=0.1, cores=2.0),  # lowest before, highest after
    ]
    moves, _, _ = run_cycles(nodes, [PlacedReplica("web-api-0", "n1")], [30.0, 60.0])
    assert [m.dst for m in moves] == ["n2"]


def test_an_undeclared_request_weighs_twelve_percent_cpu() -> None:
    nodes, replicas = hot_cluster(cpu=None, memory=None)
    moves, events, _ = run_cycles(nodes, replicas, [30.0, 60.0])
    assert events[0].payload["relief"] == pytest.approx(0.12)
    assert len(moves) == 1


def test_a_new_leader_with_empty_state_needs_two_hot_cycles_again() -> None:
    nodes, replicas = hot_cluster()
    run_cycles(nodes, replicas, [30.0])
    moves, events, state = run_cycles(nodes, replicas, [60.0], PressureState())
    assert (moves, events) == ([], [])
    moves, _, _ = run_cycles(nodes, replicas, [90.0], state)
    assert len(moves) == 1
    assert np.all(state.hot_cycles >= 0)


def test_a_gpu_request_that_does_not_fit_the_destination_is_resource_limits() -> None:
    nodes, replicas = hot_cluster()
    node_cols, replica_cols = columns(nodes, replicas)
    node_cols = dataclasses.replace(node_cols, other_free={"gpu": np.array([0.0, 0.0])})
    replica_cols = dataclasses.replace(replica_cols, other_request={0: {"gpu": 1000.0}})
    state = rebalance(node_cols, replica_cols, PressureState(), 30.0, stale_after_s=STALE_AFTER_S)[2]
    node_cols = dataclasses.replace(node_cols, sample_at=np.array([60.0, 60.0]))
    moves, events, _ = rebalance(node_cols, replica_cols, state, 60.0, stale_after_s=STALE_AFTER_S)
    assert moves == [] and [e.payload["reason"] for e in events] == ["resource_limits"]
