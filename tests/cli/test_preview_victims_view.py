"""``loadmaster preview`` against a real server: the table and ``-o json`` both list the replicas the next
cycle would evict to place a Job's gang (replica, node, queue, why)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.cli.in_process_server import InProcessServer
from tests.cli.test_commands_in_process import Live
from tests.e2e.processes import wait_for

RUNNING_JOBS = """\
api_version: loadmaster/v1
kind: Queue
metadata: {name: team-b}
spec: {deserved: {cpu: "0"}}
---
api_version: loadmaster/v1
kind: Job
metadata: {name: b1}
spec: {tasks: 1, command: [x], queue: team-b, priority: 10, resources: {cpu: "3", memory: 64Mi}}
---
api_version: loadmaster/v1
kind: Job
metadata: {name: b2}
spec: {tasks: 1, command: [x], queue: team-b, priority: 10, resources: {cpu: "3", memory: 64Mi}}
"""
GANG = """\
api_version: loadmaster/v1
kind: Job
metadata: {name: train}
spec:
  {tasks: 2, min_available: 2, command: [x], queue: team-b, priority: 90, resources: {cpu: "3", memory: 64Mi}}
"""


def _phases(live: Live) -> dict[str, str]:
    return {r["metadata"]["name"]: r["status"]["phase"] for r in live.api("GET", "/api/replicas")["items"]}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """n1 and n2 (4 cpu each), each running a 3-cpu replica of team-b."""
    server = InProcessServer(tmp_path_factory.mktemp("preview-victims")).start()
    try:
        cluster = Live(server)
        for name in ("n1", "n2"):
            body = {"name": name, "capacity": {"cpu": "4", "memory": "8Gi"}}
            cluster.api("POST", "/api/nodes/register", body)
        assert cluster.cli("apply", "-f", "-", stdin=RUNNING_JOBS).exit_code == 0
        wait_for(lambda: _phases(cluster) == {"b1-0": "Scheduled", "b2-0": "Scheduled"}, "b1, b2 placed", 20)
        for name in ("b1-0", "b2-0"):
            cluster.api("PUT", f"/api/replicas/{name}/status", {"phase": "Running"})
        wait_for(lambda: _phases(cluster) == {"b1-0": "Running", "b2-0": "Running"}, "b1, b2 running", 20)
        yield cluster
    finally:
        server.close()


def test_preview_as_json_lists_the_gangs_victims_with_node_queue_and_why(live: Live) -> None:
    shown = live.cli("preview", "-f", "-", "-o", "json", stdin=GANG)
    assert shown.exit_code == 0, shown.output
    result = json.loads(shown.stdout)
    replicas = live.api("GET", "/api/replicas")["items"]
    nodes = {r["metadata"]["name"]: r["status"]["node_ref"] for r in replicas}
    victims = {(v["replica"], v["from"], v["queue"]) for v in result["victims"]}
    assert victims == {("b1-0", nodes["b1-0"], "team-b"), ("b2-0", nodes["b2-0"], "team-b")}
    assert all(v["why"].startswith("preempt: for job train") for v in result["victims"])


def test_the_preview_table_lists_the_victims_and_what_each_gang_member_waits_for(live: Live) -> None:
    shown = live.cli("preview", "-f", "-", stdin=GANG)
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert "the cycle would evict 2 replica(s):" in lines
    evicted = [line.split() for line in lines if line.split()[:1] in (["b1-0"], ["b2-0"])]
    # each victim twice: under the gang member it makes room for, and in the cycle's list
    assert sorted(row[0] for row in evicted) == ["b1-0", "b1-0", "b2-0", "b2-0"]
    for row in evicted:
        assert row[1:3] in (["evict", "n1"], ["evict", "n2"]) and row[4:6] == ["team-b", "preempt"]
    assert sum("once the replicas evicted or moved off it are gone" in line for line in lines) == 2
    assert _phases(live) == {"b1-0": "Running", "b2-0": "Running"}  # preview stored nothing
