"""Drain cost: ``remove_node`` of several loaded nodes at once in a timeline (virtual clock, memory store).

100 nodes, 1,000 replicas (10 services x 100, 100m cpu each), every node Ready at 0; at 60 s, five nodes are
removed at the same instant. Reported: how many replicas moved (``replica_rescheduled``), the virtual time
from ``drain_started`` to each ``drain_completed``, and the wall time of the run against the same timeline
without the removals (the difference is what the drains cost). Prints JSON.

    .venv/bin/python bench/drain.py [--nodes 100 --replicas 1000 --drained 5]
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

SERVICES = 10
DRAIN_AT_S = 60
END_S = 120


def timeline_document(nodes: int, replicas: int, drained: int) -> dict[str, Any]:
    per_service = replicas // SERVICES
    services = [
        {
            "name": f"s{i}",
            "image": "app:1",
            "replicas": per_service,
            "resources": {"cpu": "100m", "memory": "64Mi"},
        }
        for i in range(SERVICES)
    ]
    names = [f"n{i:04d}" for i in range(nodes)]
    steps: list[dict[str, Any]] = [
        {"at": DRAIN_AT_S, "do": {"remove_node": name}} for name in names[:drained]
    ]
    expect: dict[str, Any] = {"services": {f"app/s{i}": {"running": per_service} for i in range(SERVICES)}}
    if drained:
        expect["absent"] = {"nodes": names[:drained]}
    steps.append({"at": END_S, "expect": expect})
    return {
        "name": f"bench-drain-{drained}-of-{nodes}",
        "nodes": [{"name": name, "capacity": {"cpu": 16, "memory": "64Gi"}} for name in names],
        "resources": [
            {
                "api_version": "loadmaster/v1",
                "kind": "Deployment",
                "metadata": {"name": "app"},
                "spec": {"services": services},
            }
        ],
        "timeline": steps,
    }


def timed(document: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    timeline = build_timeline(document)
    started = time.perf_counter()
    output = run_timeline(timeline)
    return time.perf_counter() - started, output


def seconds(event: dict[str, Any]) -> float:
    return float(str(event["at"]).rstrip("s"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--replicas", type=int, default=1000)
    parser.add_argument("--drained", type=int, default=5)
    args = parser.parse_args()
    configure_logging(level=logging.WARNING)
    baseline_s, _ = timed(timeline_document(args.nodes, args.replicas, 0))
    wall_s, output = timed(timeline_document(args.nodes, args.replicas, args.drained))
    events = output["events"]
    started = {e["node"]: seconds(e) for e in events if e["type"] == "drain_started"}
    completed = {e["node"]: seconds(e) for e in events if e["type"] == "drain_completed"}
    print(
        json.dumps(
            {
                "nodes": args.nodes,
                "replicas": args.replicas,
                "drained_nodes": args.drained,
                "replicas_moved": sum(e["type"] == "replica_rescheduled" for e in events),
                "virtual_drain_s": {n: round(completed[n] - started[n], 3) for n in sorted(completed)},
                "wall_s": round(wall_s, 2),
                "wall_s_without_drains": round(baseline_s, 2),
                "expect_passed": output["expect"]["passed"],
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
