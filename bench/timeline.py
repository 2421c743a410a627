"""Timeline speed: virtual seconds per wall second for the control plane on a virtual clock.

(a) 100 nodes, 300 replicas, 24 virtual hours, heartbeats every 30 s (target >= 5,000x real time);
(b) 1,000 nodes, 3,000 replicas, 1 virtual hour (target >= 1,000x).
Each case is one timeline (nodes registered at 0, one Deployment applied at 0, one expect at the end that
every replica runs), run through the same harness as `loadmaster simulate`. Prints JSON.

    .venv/bin/python bench/timeline.py [--case a|b]
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from typing import Any

from loadmaster.runtime.plane.process.gc_policy import apply_gc_policy
from loadmaster.runtime.plane.process.logging_setup import configure_logging
from loadmaster.timeline.harness import run_timeline
from loadmaster.timeline.schema import build_timeline

CASES = {"a": (100, 300, 24 * 3600), "b": (1000, 3000, 3600)}
SERVICES = 10  # the replicas are split evenly over this many services


def timeline_document(nodes: int, replicas: int, duration_s: int) -> dict[str, Any]:
    per_service = replicas // SERVICES
    services = [
        {
            "name": f"s{i}",
            "image": "app:1",
            "replicas": per_service,
            "resources": {"cpu": "100m", "memory": "128Mi"},
        }
        for i in range(SERVICES)
    ]
    return {
        "name": f"bench-{nodes}-nodes",
        "nodes": [{"name": f"n{i:04d}", "capacity": {"cpu": 16, "memory": "64Gi"}} for i in range(nodes)],
        "resources": [
            {
                "api_version": "loadmaster/v1",
                "kind": "Deployment",
                "metadata": {"name": "app"},
                "spec": {"services": services},
            }
        ],
        "timeline": [
            {
                "at": duration_s,
                "expect": {"services": {f"app/s{i}": {"running": per_service} for i in range(SERVICES)}},
            }
        ],
    }


def run_case(name: str) -> dict[str, Any]:
    nodes, replicas, duration_s = CASES[name]
    timeline = build_timeline(timeline_document(nodes, replicas, duration_s))
    started = time.perf_counter()
    cpu_started = time.process_time()
    output = run_timeline(timeline)
    wall_s = time.perf_counter() - started
    return {
        "case": name,
        "nodes": nodes,
        "replicas": replicas,
        "virtual_s": duration_s,
        "wall_s": round(wall_s, 2),
        "cpu_s": round(time.process_time() - cpu_started, 2),
        "speedup": round(duration_s / wall_s),
        "expect_passed": output["expect"]["passed"],
        "events": len(output["events"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(CASES), action="append")
    args = parser.parse_args()
    configure_logging(level=logging.WARNING)
    apply_gc_policy()  # as the CLI does
    print(json.dumps([run_case(case) for case in args.case or sorted(CASES)], indent=1))


if __name__ == "__main__":
    main()
