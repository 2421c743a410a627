"""``kill -9`` the server while a 10,000-replica Deployment is being expanded, restart it on the same SQLite
dir: nothing lost, nothing duplicated, no index reused, no replica on two nodes, no node over-committed."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from loadmaster.core.resources import parse_resources
from tests.e2e.processes import Server, wait_for

REPLICAS = 10_000
NODES = 20
NODE_CAPACITY = {"cpu": "64", "memory": "256Gi"}
REQUEST = {"cpu": "100m", "memory": "64Mi"}


def deployment(replicas: int) -> dict[str, Any]:
    service = {"name": "s", "command": ["serve"], "replicas": replicas, "resources": REQUEST}
    return {
        "api_version": "loadmaster/v1",
        "kind": "Deployment",
        "metadata": {"name": "big"},
        "spec": {"services": [service]},
    }


def stats(server: Server) -> dict[str, Any]:
    with server.client() as client:
        return dict(client.get("/api/admin/stats").raise_for_status().json())


def all_scheduled(server: Server, count: int) -> bool:
    figures = stats(server)
    return (
        figures["objects"]["replicas"] == count and figures["replicas_by_phase"].get("Scheduled", 0) == count
    )


def test_a_server_killed_mid_expansion_resumes_without_loss_duplication_or_overcommit(tmp_path: Path) -> None:
    server = Server(tmp_path / "data").start()
    with server.client() as client:
        for index in range(NODES):
            body = {
                "name": f"n{index:02d}",
                "labels": {},
                "capacity": NODE_CAPACITY,
                "system_reserved": {},
                "taints": [],
                "network": {},
            }
            client.post("/api/nodes/register", json=body).raise_for_status()
        client.post("/api/apply", json={"items": [deployment(REPLICAS)]}).raise_for_status()
    # Kill as soon as the expansion has started: some replicas are stored, most are not yet.
    at_kill = wait_for(lambda: stats(server)["objects"]["replicas"], "the first replicas", 30, 0.005)
    assert server.process is not None
    server.process.kill9()

    server.start()
    wait_for(
        lambda: all_scheduled(server, REPLICAS), f"{REPLICAS} replicas Scheduled after the restart", 60, 0.2
    )
    with server.client() as client:
        items = client.get("/api/replicas").raise_for_status().json()["items"]
        nodes = {
            n["metadata"]["name"]: n for n in client.get("/api/nodes").raise_for_status().json()["items"]
        }

    names = [item["metadata"]["name"] for item in items]
    assert len(names) == len(set(names)) == REPLICAS, "a replica was lost or stored twice"
    indices = Counter(item["spec"]["index"] for item in items)
    assert set(indices) == set(range(REPLICAS)) and max(indices.values()) == 1, (
        "an index was skipped or reused"
    )
    assert set(names) == {f"big-s-{index}" for index in range(REPLICAS)}

    used: dict[str, Counter[str]] = defaultdict(Counter)
    for item in items:
        node = item["status"]["node_ref"]
        assert node in nodes, f"{item['metadata']['name']} is on unknown node {node}"
        used[node].update(parse_resources(item["spec"]["resources"]))
    capacity = parse_resources(NODE_CAPACITY)
    for node, amounts in used.items():
        for resource, amount in amounts.items():
            assert amount <= capacity[resource], (
                f"{node} over-committed on {resource}: {amount} > {capacity[resource]}"
            )

    # The counter survived the crash: one more replica gets the next index, never an old one.
    with server.client() as client:
        client.post("/api/apply", json={"items": [deployment(REPLICAS + 1)]}).raise_for_status()
    wait_for(lambda: all_scheduled(server, REPLICAS + 1), "the added replica", 30, 0.1)
    with server.client() as client:
        added = client.get(f"/api/replicas/big-s-{REPLICAS}").raise_for_status().json()
    assert added["spec"]["index"] == REPLICAS
    assert server.stop() == 0
    # Recorded so a run's log shows how far the expansion had got when it was killed.
    print(f"killed with {at_kill} of {REPLICAS} replicas stored")
