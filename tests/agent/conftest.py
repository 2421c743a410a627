"""A fresh cluster per test: one SQLite server in this process and two real agents (agent-a, agent-b)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.real_cluster import Agent, RealCluster, SqliteServer
from tests.e2e.processes import wait_for

NODES = ("agent-a", "agent-b")


@pytest.fixture
def real_cluster(tmp_path: Path) -> Iterator[RealCluster]:
    server = SqliteServer(tmp_path / "data").start()
    agents = [Agent(name, tmp_path / f"work-{name}", server).start() for name in NODES]
    cluster = RealCluster(server, agents, tmp_path)
    try:
        wait_for(
            lambda: (
                all(cluster.node(n).get("status", {}).get("probe_address") for n in NODES)
                if _known(cluster)
                else False
            ),
            "both agents to register",
            timeout_s=30.0,
            interval_s=0.1,
        )
        yield cluster
    finally:
        cluster.kill_everything()
        server.close()
    assert not cluster.processes(), "a replica process outlived its test"


def _known(cluster: RealCluster) -> bool:
    with cluster.server.client() as client:
        names = {item["metadata"]["name"] for item in client.get("/api/nodes").json().get("items", [])}
    return set(NODES) <= names
