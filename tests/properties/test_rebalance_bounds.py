"""The rebalancer cannot thrash: with constant samples, at most one move per cycle, no replica moved
twice within its 10-minute cooldown, no node given two moves within its 2-minute cooldown."""

from __future__ import annotations

import itertools

from hypothesis import event, given, note, settings
from hypothesis import strategies as st

from loadmaster.controllers.rebalancing.pressure_ewma import PressureState
from loadmaster.controllers.rebalancing.rebalance import MOVED, rebalance
from loadmaster.core.voluntary_moves import NODE_COOLDOWN_S, REPLICA_COOLDOWN_S
from tests.controllers.rebalance_builders import GIB, PlacedReplica, SampledNode, columns

INTERVAL_S = 30.0
CYCLES = 80  # 40 minutes


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[SampledNode], list[PlacedReplica]]:
    node_count = draw(st.integers(2, 6))
    shares = st.floats(0.0, 1.0, allow_nan=False)
    nodes = [
        SampledNode(
            f"n{i}", cpu=draw(shares), memory=draw(shares), cores=draw(st.sampled_from([4.0, 8.0, 16.0]))
        )
        for i in range(node_count)
    ]
    nodes[0].cpu = draw(st.floats(0.86, 1.0))  # a hot spot most of the time: moves to check
    replicas = [
        PlacedReplica(
            f"web-s{draw(st.integers(0, 3))}-{i}",
            f"n{draw(st.integers(0, node_count - 1))}",
            cpu=draw(st.one_of(st.none(), st.sampled_from([0.5, 1.0, 2.0, 3.0]))),
            memory=draw(st.one_of(st.none(), st.sampled_from([0.5 * GIB, 1 * GIB]))),
            spread=draw(st.booleans()),
            movable=draw(st.integers(0, 4)) > 0,
            bound_at=-draw(st.sampled_from([0.0, 300.0, 3600.0])),
        )
        for i in range(draw(st.integers(1, 14)))
    ]
    for replica in replicas:
        replica.service = replica.name.split("-")[1]
    return nodes, replicas


@settings(max_examples=60)
@given(clusters())
def test_with_constant_samples_moves_are_bounded_and_respect_both_cooldowns(cluster) -> None:
    nodes, replicas = cluster
    by_name = {r.name: r for r in replicas}
    state = PressureState()
    moved_at: dict[str, list[float]] = {}
    received_at: dict[str, list[float]] = {}
    moves_per_cycle = []
    for k in range(1, CYCLES + 1):
        now = k * INTERVAL_S
        for node in nodes:
            node.sampled_at = now  # the same utilisation, sampled again
        node_cols, replica_cols = columns(nodes, replicas)
        moves, events, state = rebalance(node_cols, replica_cols, state, now, stale_after_s=90.0)
        assert [e.type for e in events].count(MOVED) == len(moves)
        moves_per_cycle.append(len(moves))
        for move in moves:
            moved_at.setdefault(move.replica, []).append(now)
            received_at.setdefault(move.dst, []).append(now)
            by_name[move.replica].node, by_name[move.replica].bound_at = move.dst, now
    assert max(moves_per_cycle) <= 1
    for times in moved_at.values():
        assert all(b - a >= REPLICA_COOLDOWN_S for a, b in itertools.pairwise(times))
    for times in received_at.values():
        assert all(b - a >= NODE_COOLDOWN_S for a, b in itertools.pairwise(times))
    note(f"moves: {sum(moves_per_cycle)}")
    event("moved" if any(moves_per_cycle) else "nothing moved")
