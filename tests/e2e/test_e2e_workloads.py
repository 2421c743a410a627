"""A real server and simulated nodes: workloads applied through the CLI get every replica onto a node."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import AGENT_NODES, Cluster, write
from tests.e2e.processes import wait_for

WORKLOADS = """\
api_version: loadmaster/v1
kind: Queue
metadata: {name: e2e-team}
spec: {deserved: {gpu: 4}, limit: {gpu: 8}}
---
api_version: loadmaster/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  services:
    - {name: api, image: "registry.example/api:1", replicas: 3, placement: spread,
       resources: {cpu: 250m, memory: 256Mi}, ports: [8080]}
    - {name: worker, image: "registry.example/worker:1", replicas: 2, placement: pack,
       resources: {cpu: "1", memory: 1Gi}}
---
api_version: loadmaster/v1
kind: Job
metadata: {name: gang}
spec: {queue: e2e-team, tasks: 3, min_available: 3, command: [python, train.py],
       resources: {cpu: "2", memory: 2Gi, gpu: 1}}
"""
EXPECTED = {
    "web-api-0",
    "web-api-1",
    "web-api-2",
    "web-worker-0",
    "web-worker-1",
    "gang-0",
    "gang-1",
    "gang-2",
}


def replicas(cluster: Cluster) -> dict[str, dict[str, Any]]:
    with cluster.server.client() as client:
        items = client.get("/api/replicas").raise_for_status().json()["items"]
    return {item["metadata"]["name"]: item for item in items}


def phase(replica: dict[str, Any]) -> str:
    return str(replica.get("status", {}).get("phase", "Pending"))


def test_a_deployment_and_a_gang_job_get_every_replica_onto_a_node(cluster: Cluster, tmp_path: Path) -> None:
    applied = cluster.cli("apply", "-f", str(write(tmp_path / "workloads.yaml", WORKLOADS)))
    assert applied.exit_code == 0, applied.output
    assert applied.stdout.splitlines() == [
        "queues/e2e-team created",
        "deployments/web created",
        "jobs/gang created",
    ]

    def all_running() -> dict[str, dict[str, Any]] | None:
        current = {name: r for name, r in replicas(cluster).items() if name in EXPECTED}
        done = set(current) == EXPECTED and all(phase(r) == "Running" for r in current.values())
        return current if done else None

    placed = wait_for(all_running, "every replica Running (scheduled, then started by the agent)")
    for name, replica in placed.items():
        assert replica["status"]["node_ref"] in AGENT_NODES, name
    # Spread with a host port: the three API replicas are on three different nodes.
    assert len({placed[f"web-api-{i}"]["status"]["node_ref"] for i in range(3)}) == 3

    listed = cluster.cli("get", "replicas", "-o", "json")
    assert listed.exit_code == 0, listed.output
    names = {item["metadata"]["name"] for item in json.loads(listed.stdout)["items"]}
    assert names >= EXPECTED

    again = cluster.cli("apply", "-f", str(tmp_path / "workloads.yaml"))
    assert again.stdout.splitlines() == [
        "queues/e2e-team unchanged",
        "deployments/web unchanged",
        "jobs/gang unchanged",
    ]

    why = cluster.cli("why", "gang-0")
    assert why.exit_code == 0, why.output
    assert f"replica gang-0 is Running on node {placed['gang-0']['status']['node_ref']}" in why.stdout

    nodes = cluster.cli("get", "nodes")
    assert nodes.exit_code == 0, nodes.output
    rows = {line.split()[0]: line.split() for line in nodes.stdout.splitlines()[2:] if line.strip()}
    assert set(rows) >= set(AGENT_NODES)
    assert all(rows[node][1] == "Ready" for node in AGENT_NODES)


def test_cordon_and_uncordon_flip_the_nodes_unschedulable_flag(cluster: Cluster) -> None:
    cordoned = cluster.cli("cordon", "e2e-04")
    assert (cordoned.exit_code, cordoned.stdout.strip()) == (0, "nodes/e2e-04 cordoned"), cordoned.output
    shown = json.loads(cluster.cli("get", "nodes", "e2e-04", "-o", "json").stdout)
    assert shown["spec"]["unschedulable"] is True
    uncordoned = cluster.cli("uncordon", "e2e-04")
    assert (uncordoned.exit_code, uncordoned.stdout.strip()) == (0, "nodes/e2e-04 schedulable")
    assert (
        json.loads(cluster.cli("get", "nodes", "e2e-04", "-o", "json").stdout)["spec"]["unschedulable"]
        is False
    )


def test_deleting_a_job_stops_its_replicas_through_the_agent(cluster: Cluster, tmp_path: Path) -> None:
    job = "api_version: loadmaster/v1\nkind: Job\nmetadata: {name: short}\nspec: {tasks: 2, command: [a]}\n"
    assert cluster.cli("apply", "-f", str(write(tmp_path / "short.yaml", job))).exit_code == 0
    wait_for(
        lambda: all(phase(replicas(cluster).get(f"short-{i}", {})) == "Running" for i in range(2)),
        "the short job's replicas Running",
    )
    deleted = cluster.cli("delete", "jobs", "short")
    assert (deleted.exit_code, deleted.stdout.strip()) == (0, "jobs/short deleted"), deleted.output

    def stopped() -> bool:
        left = {name: r for name, r in replicas(cluster).items() if name.startswith("short-")}
        return all(phase(r) == "Terminated" for r in left.values())

    wait_for(stopped, "the deleted job's replicas Terminated (or removed)")
    missing = cluster.cli("get", "jobs", "short")
    assert missing.exit_code == 1
    assert "not found" in missing.stderr
