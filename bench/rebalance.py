"""One pressure-rebalancer cycle at scale (issue 16's figure); prints JSON.

    .venv/bin/python bench/rebalance.py [--nodes 5000] [--replicas 50000] [--cycles 50]

Builds random columns (every node sampled, one small hot node so that every gate is evaluated,
replicas spread over the nodes with requests of 0.1-2 cores and 0.1-4 GiB, one service per 10
replicas, half of them ``spread``) and times ``controllers.rebalance.rebalance`` cycle after cycle (the
state carried over, samples re-stamped, as the leader does): once as it comes (a move most cycles), and
once with every node in its move cooldown (every candidate searched and refused: the worst case).
Reports the median and p99 wall time, and what the last cycle decided. Target (issue 16): <= 20 ms at
5,000 nodes and 50,000 replicas. Not a test: the figure depends on the machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from loadmaster.controllers.pressure_ewma import PressureState
from loadmaster.controllers.rebalance import rebalance
from loadmaster.controllers.rebalance_inputs import NodeColumns, ReplicaColumns

GIB = 2.0**30
INTERVAL_S = 30.0


def build(node_count: int, replica_count: int, seed: int) -> tuple[NodeColumns, ReplicaColumns]:
    rng = np.random.default_rng(seed)
    names = tuple(f"node-{i:05d}" for i in range(node_count))
    allocatable = np.array([np.full(node_count, 32.0), np.full(node_count, 128 * GIB)])
    allocatable[:, 0] = (8.0, 32 * GIB)  # a small hot node: its larger replicas clear the relief floor
    node = rng.integers(0, node_count, replica_count)
    node[: replica_count // node_count] = 0  # node-00000 is the hot one: give it its share of candidates
    request = np.array([rng.uniform(0.1, 2.0, replica_count), rng.uniform(0.1, 4.0, replica_count) * GIB])
    requested = np.zeros((2, node_count))
    np.add.at(requested[0], node, request[0])
    np.add.at(requested[1], node, request[1])
    sample = np.minimum(requested / allocatable, 0.7)
    sample[:, 0] = (0.95, 0.5)
    service_count = max(1, replica_count // 10)
    service = rng.integers(0, service_count, replica_count)
    nodes = NodeColumns(
        names=names,
        allocatable=allocatable,
        requested=requested,
        sample=sample,
        sample_at=np.zeros(node_count),
        can_receive=np.ones(node_count, dtype=bool),
    )
    replicas = ReplicaColumns(
        names=tuple(f"svc{s:05d}-{i:06d}" for i, s in enumerate(service)),
        node=node.astype(np.int64),
        request=request,
        declared=np.ones((2, replica_count), dtype=bool),
        service=service.astype(np.int64),
        services=tuple(("bench", f"svc{s:05d}") for s in range(service_count)),
        spread=service % 2 == 0,
        movable=np.ones(replica_count, dtype=bool),
        bound_at=np.full(replica_count, -3600.0),
    )
    return nodes, replicas


def timed_cycles(
    nodes: NodeColumns, replicas: ReplicaColumns, cycles: int, all_cooled: bool
) -> dict[str, object]:
    """Cycles at 30 s steps; ``all_cooled`` puts every node in its move cooldown before each cycle, so
    that every candidate runs the whole destination search and is refused (the worst case)."""
    state = PressureState()
    timings_ms = []
    moves: list[object] = []
    events: list[object] = []
    for k in range(1, cycles + 1):
        now = k * INTERVAL_S
        nodes.sample_at[:] = now
        if all_cooled:
            state.node_moved_at = dict.fromkeys(nodes.names, now)
        started = time.perf_counter()
        moves, events, state = rebalance(nodes, replicas, state, now, stale_after_s=3 * INTERVAL_S)
        timings_ms.append((time.perf_counter() - started) * 1000)
    steady = timings_ms[1:] or timings_ms  # the first cycle also aligns the state to the node names
    return {
        "first_cycle_ms": round(timings_ms[0], 3),
        "median_ms": round(statistics.median(steady), 3),
        "p99_ms": round(sorted(steady)[int(0.99 * (len(steady) - 1))], 3),
        "max_ms": round(max(steady), 3),
        "last_cycle": {"moves": len(moves), "events": len(events)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--replicas", type=int, default=50000)
    parser.add_argument("--cycles", type=int, default=50)
    parser.add_argument("--seed", type=int, default=16)
    args = parser.parse_args()
    nodes, replicas = build(args.nodes, args.replicas, args.seed)
    print(
        json.dumps(
            {
                "bench": "rebalance_cycle",
                "nodes": args.nodes,
                "replicas": args.replicas,
                "cycles": args.cycles,
                "target_ms": 20,
                "one_move_per_cycle": timed_cycles(nodes, replicas, args.cycles, all_cooled=False),
                "every_candidate_refused": timed_cycles(nodes, replicas, args.cycles, all_cooled=True),
            }
        )
    )


if __name__ == "__main__":
    main()
