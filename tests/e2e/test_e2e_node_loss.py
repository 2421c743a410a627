"""A real server on SQLite and two simulated agents: when one agent stops, its node goes NotReady, is
probed (no probe address published: host down), and the single-replica service on it is placed on
the other node, while the multi-replica one stays; the node's node-loss timeline says so."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Cluster, write
from tests.e2e.processes import Process, Server, start_agent, wait_for

WORKLOADS = """\
api_version: loadmaster/v1
kind: Deployment
metadata: {name: db}
spec:
  services: [{name: pg, image: "pg:16", replicas: 1, resources: {cpu: 500m, memory: 256Mi}}]
---
api_version: loadmaster/v1
kind: Deployment
metadata: {name: web}
spec:
  services: [{name: api, image: "web:1", replicas: 2, resources: {cpu: 500m, memory: 256Mi}}]
"""
LOST, SPARE = "lossa-01", "lossb-01"
# NotReady 5 s after the last heartbeat (agents beat every second), probed 1 s later: the test waits
# seconds, not minutes.
SERVER_OPTIONS = (
    "--not-ready-after-s",
    "5",
    "--node-loss-wait-s",
    "1",
    "--node-loss-policy",
    "single_replica",
)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    server = Server(tmp_path / "data", options=SERVER_OPTIONS).start()
    try:
        yield server
    finally:
        assert server.stop() == 0, server.process.log() if server.process else ""


def objects(server: Server, kind: str) -> dict[str, dict[str, Any]]:
    with server.client() as client:
        items = client.get(f"/api/{kind}").raise_for_status().json()["items"]
    return {item["metadata"]["name"]: item for item in items}


def placement(server: Server) -> dict[str, tuple[str, str | None]]:
    return {
        name: (r["status"].get("phase", "Pending"), r["status"].get("node_ref"))
        for name, r in objects(server, "replicas").items()
    }


def test_a_node_whose_agent_stops_has_its_single_replica_service_placed_elsewhere(
    server: Server, tmp_path: Path
) -> None:
    lost = start_agent(server, 1, "cpu=4,memory=8Gi", "lossa", tmp_path, heartbeat="1s")
    spare: Process | None = None
    try:
        wait_for(lambda: objects(server, "nodes").get(LOST), f"{LOST} registered")
        cli = Cluster(server, lost).cli
        applied = cli("apply", "-f", str(write(tmp_path / "workloads.yaml", WORKLOADS)))
        assert applied.exit_code == 0, applied.output
        running_on_lost = {name: ("Running", LOST) for name in ("db-pg-0", "web-api-0", "web-api-1")}
        wait_for(lambda: placement(server) == running_on_lost, f"every replica Running on {LOST}")
        spare = start_agent(server, 1, "cpu=4,memory=8Gi", "lossb", tmp_path, heartbeat="1s")
        wait_for(lambda: objects(server, "nodes").get(SPARE), f"{SPARE} registered")

        assert lost.stop() == 0, lost.log()
        moved = wait_for(
            lambda: placement(server)["db-pg-0"] == ("Running", SPARE) and placement(server),
            f"db-pg-0 Running on {SPARE}",
        )
        # The two-replica service stays on the lost node (policy single_replica).
        assert moved["web-api-0"][1] == LOST and moved["web-api-1"][1] == LOST

        with server.client() as client:
            audit = client.get("/api/audit", params={"type": "node_lost,replica_rescheduled"}).json()["items"]
            timeline = client.get(f"/api/nodes/{LOST}/node-loss").raise_for_status().json()["node_loss"]
            why_moved = client.get("/api/replicas/db-pg-0/why").raise_for_status().json()
            why_stayed = client.get("/api/replicas/web-api-0/why").raise_for_status().json()
        node_lost = [e for e in audit if e["type"] == "node_lost"]
        assert [e["details"]["probe"] for e in node_lost] == ["host_down"]
        assert node_lost[0]["details"]["replicas"] == ["db-pg-0"]
        rescheduled = [e for e in audit if e["type"] == "replica_rescheduled"]
        assert [(e["object"], e["details"]["src"], e["details"]["reason"]) for e in rescheduled] == [
            ("replicas/db-pg-0", LOST, "NodeLost")
        ]
        assert timeline["moved"] == ["db-pg-0"] and timeline["next"] is None
        assert timeline["probe"]["answer"] == "host_down" and timeline["lost_at"] is not None
        assert why_moved["node_ref"] == SPARE and "node_loss" not in why_moved
        assert why_stayed["node_loss"]["lost_at"] == timeline["lost_at"]

        described = cli("describe", "node", LOST)
        assert described.exit_code == 0, described.output
        assert "Node loss:" in described.stdout and "policy single_replica" in described.stdout
    finally:
        for agent in (lost, spare):
            if agent is not None and agent.alive():
                agent.stop()
