"""``loadmaster logs``: the server relays a replica's output from the agent that runs it."""

from __future__ import annotations

import time

import psutil
from typer.testing import CliRunner

from loadmaster.cli.main import app
from tests.agent.real_cluster import WAIT_S, RealCluster
from tests.agent.test_agent_processes import deployment, running_pid
from tests.e2e.processes import wait_for

# Prints five lines, then "more" each time a file named "more" appears in its directory.
TICKER = (
    "import os, time\nfor i in range(5): print('line', i, flush=True)\n"
    "while True:\n    time.sleep(0.2)\n"
    "    if os.path.exists('more'): os.remove('more'); print('more', flush=True)"
)


def logs(cluster: RealCluster, *args: str) -> str:
    options = ["--server", cluster.server.url, "--token", cluster.server.token]
    result = CliRunner().invoke(app, ["logs", *args, *options], env={"LOADMASTER_SERVER": None})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_logs_prints_the_last_lines_of_a_replica(real_cluster: RealCluster) -> None:
    real_cluster.apply(deployment("talk", TICKER))
    running_pid(real_cluster, "talk-svc-0")
    wait_for(lambda: "line 4" in logs(real_cluster, "talk-svc-0"), "the output", timeout_s=WAIT_S)
    assert logs(real_cluster, "talk-svc-0", "--tail", "2").splitlines() == ["line 3", "line 4"]


def test_logs_follow_relays_new_output_as_it_is_written(real_cluster: RealCluster) -> None:
    real_cluster.apply(deployment("chat", TICKER))
    pid = running_pid(real_cluster, "chat-svc-0")
    wait_for(lambda: "line 4" in logs(real_cluster, "chat-svc-0"), "the output", timeout_s=WAIT_S)
    directory = psutil.Process(pid).cwd()
    with (
        real_cluster.server.client() as client,
        client.stream(
            "GET", "/api/replicas/chat-svc-0/logs", params={"follow": "true", "tail": "0"}
        ) as response,
    ):
        assert response.status_code == 200
        time.sleep(0.5)
        open(f"{directory}/more", "w").close()
        received = ""
        for chunk in response.iter_text():
            received += chunk
            if "more" in received:
                break
    assert received == "more\n"


def test_logs_of_a_replica_not_on_a_node_say_why(real_cluster: RealCluster) -> None:
    real_cluster.apply(deployment("huge", "pass").replace("cpu: 100m", "cpu: '64'"))
    real_cluster.wait_status("huge-svc-0", lambda s: s.get("phase") == "Pending", "Pending")
    with real_cluster.server.client() as client:
        answer = client.get("/api/replicas/huge-svc-0/logs")
        missing = client.get("/api/replicas/nothing-here-0/logs")
    assert answer.status_code == 409
    assert answer.json()["message"] == "replicas/huge-svc-0 is not on a node: it has no logs yet"
    assert missing.status_code == 404
