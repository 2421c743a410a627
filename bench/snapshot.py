"""Snapshot cost on a warm SnapshotCache, with GPU devices derived or stored; prints JSON. Not a test.

    .venv/bin/python bench/snapshot.py [--nodes 1000] [--tasks-per-node 4]

Every node has 8 GPUs and ``--tasks-per-node`` Running one-GPU tasks. ``derived``: the tasks carry no
devices (``simulate``, the replay of a trace), so the snapshot lays them out by the placement rule;
``stored``: each task carries the devices the control plane stored at its bind (``status.devices``),
random ones, which the snapshot keeps. The cache is warmed by one snapshot, then ``RUNS`` snapshots of
the same cluster are timed (a cycle on an unchanged cluster: the memoised device layouts apply).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from loadmaster.core.columns.snapshot import ClusterSnapshot, SnapshotCache
from loadmaster.core.model import Cluster, Job, Node, Task, TaskStatus
from loadmaster.core.resources import GPU_DEVICE

RUNS = 15
GPUS_PER_NODE = 8


def cluster(nodes: int, per_node: int, stored: bool) -> Cluster:
    rng = random.Random(1)
    capacity = {"cpu": 64_000, "gpu": GPUS_PER_NODE * GPU_DEVICE, "memory": 512 * 2**30}
    jobs = []
    for i in range(nodes):
        devices = rng.sample(range(GPUS_PER_NODE), per_node)
        for k in range(per_node):
            name = f"t{i}-{k}"
            task = Task(
                name,
                name,
                {"cpu": 1000, "gpu": GPU_DEVICE},
                TaskStatus.RUNNING,
                f"n{i}",
                devices=(devices[k],) if stored else (),
            )
            jobs.append(Job(name, (task,)))
    return Cluster(tuple(Node(f"n{i}", capacity, capacity) for i in range(nodes)), tuple(jobs))


def timed_ms(subject: Cluster) -> dict[str, float]:
    cache = SnapshotCache()
    ClusterSnapshot(subject, cache)
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        ClusterSnapshot(subject, cache)
        times.append((time.perf_counter() - started) * 1000)
    return {"median_ms": round(statistics.median(times), 2), "min_ms": round(min(times), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--tasks-per-node", type=int, default=4)
    args = parser.parse_args()
    figures = {
        "nodes": args.nodes,
        "gpu_tasks": args.nodes * args.tasks_per_node,
        "derived": timed_ms(cluster(args.nodes, args.tasks_per_node, stored=False)),
        "stored": timed_ms(cluster(args.nodes, args.tasks_per_node, stored=True)),
    }
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
