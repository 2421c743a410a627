"""Benchmark: load a large scenario file (5,000 nodes, 10,000 single-task jobs) and time its two phases.

Writes the file (flow style, as users' generated what-if files are) to a temporary directory, then
times, over several rounds, ``yaml_rs.loads`` (parse) and ``build_scenario`` (validate into the model)
separately, plus ``load_scenario`` end to end. Prints one JSON object; the figures are the median and
the best round. Half the tasks run on nodes (exercising the over-commit check), nodes carry labels and
taints, and jobs spread over a small queue tree.

Usage: ``.venv/bin/python bench/scenario_load.py [--nodes N] [--jobs N] [--rounds N]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import yaml_rs

from loadmaster.scenario.schema import build_scenario, load_scenario

ZONES = ("a", "b", "c", "d")
TEAMS = ("team-a", "team-b", "team-c", "team-d")


def scenario_text(node_count: int, job_count: int) -> str:
    """A valid scenario: nodes of 32 cpu / 128Gi / 8 gpu; every other job already Running (1 per node)."""
    lines = [
        "name: bench-large-cluster",
        "source: bench/scenario_load.py",
        "config: {actions: [allocate, reclaim], strategy: binpack}",
        "queues:",
        "  - {name: dept, deserved: {gpu: 64}}",
    ]
    lines += [
        f"  - {{name: {team}, parent: dept, deserved: {{gpu: 16}}, limit: {{gpu: 64}}}}" for team in TEAMS
    ]
    lines.append("nodes:")
    for n in range(node_count):
        taints = ", taints: [{key: dedicated, value: infer, effect: NoSchedule}]" if n % 10 == 0 else ""
        lines.append(
            f"  - {{name: node-{n}, labels: {{zone: {ZONES[n % 4]}, rack: r{n % 50}}}, "
            f"capacity: {{cpu: 32, memory: 128Gi, gpu: 8}}{taints}}}"
        )
    lines.append("jobs:")
    for j in range(job_count):
        running = f", status: Running, node: node-{(j // 2) % node_count}" if j % 2 == 0 else ""
        lines.append(
            f"  - {{name: job-{j}, queue: {TEAMS[j % 4]}, priority: {50 + j % 3}, tasks: "
            f"[{{name: job-{j}-0, request: {{cpu: 500m, memory: 2Gi, gpu: 1}}, labels: {{app: app-{j % 20}}}"
            f"{running}}}]}}"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--jobs", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "large.yaml"
        path.write_text(scenario_text(args.nodes, args.jobs), encoding="utf-8")
        parse_s, validate_s, load_s = [], [], []
        for _ in range(args.rounds):
            start = time.perf_counter()
            document = yaml_rs.loads(path.read_text(encoding="utf-8"), parse_datetime=False)
            parsed = time.perf_counter()
            scenario = build_scenario(document)
            validated = time.perf_counter()
            load_scenario(path)
            loaded = time.perf_counter()
            parse_s.append(parsed - start)
            validate_s.append(validated - parsed)
            load_s.append(loaded - validated)
        size = path.stat().st_size

    print(
        json.dumps(
            {
                "benchmark": "scenario_load",
                "nodes": len(scenario.cluster.nodes),
                "jobs": len(scenario.cluster.jobs),
                "file_bytes": size,
                "rounds": args.rounds,
                "parse_s_median": round(statistics.median(parse_s), 4),
                "validate_s_median": round(statistics.median(validate_s), 4),
                "load_scenario_s_median": round(statistics.median(load_s), 4),
                "parse_s_best": round(min(parse_s), 4),
                "validate_s_best": round(min(validate_s), 4),
                "load_scenario_s_best": round(min(load_s), 4),
            }
        )
    )


if __name__ == "__main__":
    main()
