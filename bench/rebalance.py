"""One pressure-rebalancer cycle at scale (issue 16's figure); prints JSON.

    .venv/bin/python bench/rebalance.py [--nodes 5000] [--replicas 50000] [--cycles 50]

Builds random columns (every node sampled, one small hot node so that every gate is evaluated,
replicas spread over the nodes with requests of 0.1-2 cores and 0.1-4 GiB, one service per 10
replicas, half of them ``spread``) and times ``controllers.rebalancing.rebalance.rebalance`` cycle after
cycle (the state carried over, samples re-stamped, as the leader does): once as it comes (a move most
cycles), and once with every node in its move cooldown (every candidate searched and refused: the worst case).
Reports the median and p99 wall time, and what the last cycle decided. With ``--from-cache`` it also
times what the leader does before each cycle: building those columns from its object cache (stored
Node and Replica objects in a memory store), the first time and then with the rows it keeps.
Target (issue 16): a cycle <= 20 ms at 5,000 nodes and 50,000 replicas. Not a test: the figure
depends on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from datetime import datetime, timedelta

import numpy as np

from loadmaster.controllers.rebalancing.pressure_ewma import PressureState
from loadmaster.controllers.rebalancing.rebalance import rebalance
from loadmaster.controllers.rebalancing.rebalance_inputs import NodeColumns, ReplicaColumns
from loadmaster.manifests import NODE, REPLICA
from loadmaster.runtime.plane.object_cache import ObjectCache
from loadmaster.runtime.plane.storage.store_layout import encode_object, object_key
from loadmaster.runtime.rebalancing.columns import ReplicaRows, node_columns, replica_columns
from loadmaster.store.interface import Put
from loadmaster.store.memory import MemoryStore

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


def _stored(node_count: int, replica_count: int) -> list[Put]:
    stamp = "2026-01-01T00:00:00Z"
    puts = []
    for i in range(node_count):
        name = f"node-{i:05d}"
        obj = {
            "api_version": "loadmaster/v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {}},
            "spec": {"capacity": {"cpu": "32", "memory": "128Gi"}},
            "status": {
                "state": "Ready",
                "last_heartbeat": stamp,
                "pressure": {"cpu": 0.5, "memory": 0.4, "at": stamp},
            },
        }
        puts.append(Put(object_key("Node", name), encode_object(obj)))
    for t in range(replica_count):
        name = f"bench-svc{t % 5000:04d}-{t}"
        obj = {
            "api_version": "loadmaster/v1",
            "kind": "Replica",
            "metadata": {"name": name},
            "spec": {
                "owner_kind": "Deployment",
                "owner": "bench",
                "service": f"svc{t % 5000:04d}",
                "placement": "spread",
                "resources": {"cpu": "500m", "memory": "1Gi"},
            },
            "status": {"phase": "Running", "node_ref": f"node-{t % node_count:05d}", "started_at": stamp},
        }
        puts.append(Put(object_key("Replica", name), encode_object(obj)))
    return puts


async def columns_from_cache_ms(node_count: int, replica_count: int) -> dict[str, float]:
    store = MemoryStore()
    puts = _stored(node_count, replica_count)
    for start in range(0, len(puts), 100):
        await store.txn(puts[start : start + 100])
    cache = ObjectCache(store)
    await cache.start()
    rows = ReplicaRows()
    shapes: dict[object, dict[str, int]] = {}
    now = datetime.fromisoformat("2026-01-01T00:00:30+00:00")
    node_ms, replica_ms = [], []
    try:
        for _ in range(4):
            started = time.perf_counter()
            nodes = node_columns(cache.objects[NODE], now, timedelta(seconds=60), shapes)
            built = time.perf_counter()
            replica_columns(cache.objects[REPLICA], nodes, rows)
            node_ms.append((built - started) * 1000)
            replica_ms.append((time.perf_counter() - built) * 1000)
    finally:
        await cache.close()
    # The leader builds the replica columns again only when a replica changed or a node came or went;
    # otherwise a cycle pays the node columns alone.
    return {
        "first_ms": round(node_ms[0] + replica_ms[0], 1),
        "nodes_ms": round(statistics.median(node_ms[1:]), 1),
        "replicas_kept_rows_ms": round(statistics.median(replica_ms[1:]), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--replicas", type=int, default=50000)
    parser.add_argument("--cycles", type=int, default=50)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--from-cache", action="store_true", help="also time building the columns")
    args = parser.parse_args()
    nodes, replicas = build(args.nodes, args.replicas, args.seed)
    from_cache = asyncio.run(columns_from_cache_ms(args.nodes, args.replicas)) if args.from_cache else None
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
                "columns_from_cache": from_cache,
            }
        )
    )


if __name__ == "__main__":
    main()
