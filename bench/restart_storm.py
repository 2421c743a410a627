"""Restart storm: every replica of a service fails its health check at once, in a timeline.

N replicas over 20 nodes; at t = 10 s every one is reported failing; each is restarted three times and
is Failed (restart_exhausted) at its 4th failure (t = 40 s). Measures the run against a quiet run of
the same cluster (no failures), in wall and CPU time, and counts the audit events: what the restart
policy costs per failing replica. The leader's pass looks only at the replicas whose agent reported a failure
(O(what changed)), so the extra CPU time should grow with N failing replicas, not with the cluster.
Prints JSON.

    .venv/bin/python bench/restart_storm.py [--replicas 200 --replicas 1000]
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from typing import Any

from loadmaster.runtime.plane.process.logging_setup import configure_logging
from loadmaster.timeline.harness import run_timeline
from loadmaster.timeline.schema import build_timeline

NODES = 20
END_S = 60


def document(replicas: int, failing: bool) -> dict[str, Any]:
    service = {
        "name": "api",
        "image": "app:1",
        "replicas": replicas,
        "resources": {"cpu": "10m", "memory": "16Mi"},
    }
    steps: list[dict[str, Any]] = []
    if failing:
        steps += [
            {"at": 10, "do": {"replica": {"name": f"app-api-{i}", "health": "failing"}}}
            for i in range(replicas)
        ]
    expected = {"phase": "Failed", "reason": "restart_exhausted", "restart_count": 3} if failing else {}
    steps.append(
        {
            "at": END_S,
            "expect": {
                "services": {"app/api": {"running": 0 if failing else replicas}},
                "replicas": {f"app-api-{replicas - 1}": expected} if failing else {},
            },
        }
    )
    return {
        "name": f"restart-storm-{replicas}",
        "nodes": [{"name": f"n{i:02d}", "capacity": {"cpu": 64, "memory": "256Gi"}} for i in range(NODES)],
        "resources": [
            {
                "api_version": "loadmaster/v1",
                "kind": "Deployment",
                "metadata": {"name": "app"},
                "spec": {"services": [service]},
            }
        ],
        "timeline": steps,
    }


def run(replicas: int, failing: bool) -> dict[str, Any]:
    timeline = build_timeline(document(replicas, failing))
    started, cpu_started = time.perf_counter(), time.process_time()
    output = run_timeline(timeline)
    wall_s, cpu_s = time.perf_counter() - started, time.process_time() - cpu_started
    types = [event["type"] for event in output["events"]]
    return {
        "wall_s": round(wall_s, 2),
        "cpu_s": round(cpu_s, 2),  # the run is one thread: on a busy machine its CPU time is the fair figure
        "expect_passed": output["expect"]["passed"],
        "replica_restarted": types.count("replica_restarted"),
        "restart_exhausted": types.count("restart_exhausted"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, action="append")
    args = parser.parse_args()
    configure_logging(level=logging.WARNING)
    results = []
    for replicas in args.replicas or [200, 1000]:
        quiet, storm = run(replicas, failing=False), run(replicas, failing=True)
        extra_s = storm["cpu_s"] - quiet["cpu_s"]
        results.append(
            {
                "replicas": replicas,
                "nodes": NODES,
                "virtual_s": END_S,
                "quiet": quiet,
                "storm": storm,
                "extra_cpu_ms_per_failing_replica": round(1000 * extra_s / replicas, 2),
            }
        )
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
