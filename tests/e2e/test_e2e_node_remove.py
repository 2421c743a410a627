"""``loadmaster node remove`` against a real server on SQLite with a real simulated agent: a drain moves
every replica (same names, other nodes) and deletes the node; a replica that cannot move times the
drain out (the CLI exits 1 naming it); an unknown node is 404 and a node already draining 409."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from loadmaster.cli.main import app
from tests.e2e.conftest import write
from tests.e2e.processes import Process, Server, loadmaster, wait_for

NODES = ("dr-01", "dr-02", "dr-03")
# The drain timeout: long enough for a swap on a busy machine, short enough for the timeout case.
DRAIN_TIMEOUT_S = 15
WORKLOADS = """\
api_version: loadmaster/v1
kind: Deployment
metadata: {name: web}
spec:
  services:
    - {name: api, image: "registry.example/api:1", replicas: 2, resources: {cpu: 500m, memory: 256Mi}}
---
api_version: loadmaster/v1
kind: Deployment
metadata: {name: pinned}
spec:
  services:
    - {name: db, image: "registry.example/db:1", placement: hosts, hosts: [dr-03], replicas: 1,
       resources: {cpu: 500m, memory: 256Mi}}
"""


@dataclass
class DrainCluster:
    server: Server

    def cli(self, *args: str) -> Result:
        options = ["--server", self.server.url, "--data-dir", str(self.server.data_dir)]
        env = {"LOADMASTER_SERVER": None, "LOADMASTER_TOKEN": None}
        return CliRunner().invoke(app, [*args, *options], env=env)

    def get(self, path: str) -> Any:
        with self.server.client() as client:
            return client.get(path).json()

    def replicas(self) -> dict[str, dict[str, Any]]:
        return {r["metadata"]["name"]: r for r in self.get("/api/replicas")["items"]}

    def running_on(self) -> dict[str, str]:
        return {
            name: r["status"]["node_ref"]
            for name, r in self.replicas().items()
            if r["status"].get("phase") == "Running"
        }


@pytest.fixture(scope="module")
def drain_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DrainCluster]:
    data_dir = tmp_path_factory.mktemp("drain") / "data"
    server = Server(data_dir, options=("--drain-timeout-s", str(DRAIN_TIMEOUT_S))).start()
    # A long heartbeat: a removed node's agent registers it again only at its next heartbeat.
    args = loadmaster(
        "agent", "--simulate", "--count", str(len(NODES)), "--capacity", "cpu=2,memory=4Gi",
        "--name-prefix", "dr", "--heartbeat", "60s", "--server", server.url, "--data-dir", str(data_dir),
    )  # fmt: skip
    agent = Process("agent", args, data_dir.parent / "agent.log")
    agent.start()
    cluster = DrainCluster(server)
    try:
        wait_for(lambda: len(cluster.get("/api/nodes")["items"]) == len(NODES), "the simulated nodes")
        applied = cluster.cli("apply", "-f", str(write(data_dir.parent / "workloads.yaml", WORKLOADS)))
        assert applied.exit_code == 0, applied.output
        wait_for(lambda: len(cluster.running_on()) == 3, "every replica Running")
        yield cluster
    finally:
        assert agent.stop() == 0, agent.log()
        assert server.stop() == 0, server.process.log() if server.process else ""


def drain_condition(cluster: DrainCluster) -> dict[str, Any]:
    conditions = cluster.get("/api/nodes/dr-03")["status"].get("conditions", [])
    return next((c for c in conditions if c["type"] == "Drain"), {"message": ""})


def audit_types(cluster: DrainCluster) -> list[str]:
    return [entry["type"] for entry in cluster.get("/api/audit")["items"]]


def test_node_remove_wait_moves_every_replica_then_the_node_is_gone(drain_cluster: DrainCluster) -> None:
    before = drain_cluster.running_on()
    # dr-03 holds the pinned replica (the timeout case drains it); drain a node holding a web replica.
    source = min(node for name, node in before.items() if name.startswith("web-") and node != "dr-03")
    removed = drain_cluster.cli("node", "remove", source, "--wait")
    assert removed.exit_code == 0, removed.output
    assert f"nodes/{source} removed" in removed.output
    with drain_cluster.server.client() as client:
        assert client.get(f"/api/nodes/{source}").status_code == 404
    after = drain_cluster.running_on()
    assert set(after) == set(before)  # the same names: a drain keeps every replica's name
    assert source not in after.values()
    assert not any(name.endswith(".next") for name in drain_cluster.replicas())
    types = audit_types(drain_cluster)
    assert {"drain_started", "replica_rescheduled", "drain_completed"} <= set(types)


def test_a_drain_that_cannot_move_a_replica_times_out_naming_it(drain_cluster: DrainCluster) -> None:
    options = ["--server", drain_cluster.server.url, "--data-dir", str(drain_cluster.server.data_dir)]
    waiting = subprocess.Popen(
        loadmaster("node", "remove", "dr-03", "--wait", *options),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(
            lambda: (
                (drain_cluster.get("/api/nodes/dr-03")["status"].get("drain") or {}).get("state")
                == "draining"
            ),
            "the drain of dr-03",
        )
        # The pinned replica has no other eligible node: the node's Drain condition names it.
        wait_for(
            lambda: (
                "removing node dr-03: no other eligible node for the replacement of pinned-db-0 ("
                in drain_condition(drain_cluster)["message"]
            ),
            "the Drain condition naming dr-03 and pinned-db-0",
        )
        with drain_cluster.server.client() as client:
            again = client.post("/api/nodes/dr-03/remove")
            assert again.status_code == 409 and "dr-03 is already draining" in again.json()["message"]
            unknown = client.post("/api/nodes/ghost/remove")
            assert unknown.status_code == 404 and "ghost" in unknown.json()["message"]
        _, stderr = waiting.communicate(timeout=DRAIN_TIMEOUT_S + 60)
    finally:
        if waiting.poll() is None:
            waiting.kill()
    assert waiting.returncode == 1, stderr
    assert "drain of nodes/dr-03 timed out; not moved: pinned-db-0" in stderr
    node = drain_cluster.get("/api/nodes/dr-03")
    assert node["spec"]["unschedulable"] is True
    assert node["status"]["drain"]["not_moved"] == ["pinned-db-0"]
    reasons = [c["reason"] for c in node["status"]["conditions"] if c["type"] == "Drain"]
    assert reasons == ["drain_timeout"]
    assert drain_cluster.running_on()["pinned-db-0"] == "dr-03"  # still running where it was
    assert "pinned-db-0.next" not in drain_cluster.replicas()


def test_node_remove_of_an_unknown_node_exits_non_zero_naming_it(drain_cluster: DrainCluster) -> None:
    refused = drain_cluster.cli("node", "remove", "ghost")
    assert refused.exit_code == 1
    assert "ghost" in refused.output
