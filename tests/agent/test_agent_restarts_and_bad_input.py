"""An agent killed and restarted adopts what still runs and reports what ended meanwhile; bad input
(a missing command, an unwritable work dir, a process that exits at once) gives a clear condition and
no crash loop: the agent never restarts a process by itself."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import httpx

from loadmaster.core.resources import parse_bits_per_second
from tests.agent.real_cluster import WAIT_S, Agent, RealCluster, alive
from tests.agent.test_agent_processes import SLEEPER, deployment, running_pid
from tests.e2e.processes import loadmaster, wait_for


def test_an_agent_killed_and_restarted_adopts_its_running_processes(real_cluster: RealCluster) -> None:
    real_cluster.apply(deployment("keep", SLEEPER, replicas=4))
    names = [f"keep-svc-{index}" for index in range(4)]
    pids = {name: running_pid(real_cluster, name) for name in names}
    agent = next(a for a in real_cluster.agents if a.name == real_cluster.status(names[0])["node_ref"])
    mine = [name for name in names if real_cluster.status(name)["node_ref"] == agent.name]
    assert agent.process is not None
    agent.process.kill9()
    # While the agent is down one of its processes ends: the next agent must report it, not adopt it.
    os.kill(pids[mine[0]], signal.SIGKILL)
    wait_for(lambda: not alive(pids[mine[0]]), "the process to end", timeout_s=WAIT_S)
    agent.start()
    # The new agent reports it exited; since the lifecycle merge the leader's restart policy restarts it
    # at once (commands 1 and 2), so it runs again under a new pid.
    status = real_cluster.wait_status(
        mine[0], lambda s: s.get("commands_done") == 2 and s.get("pid") != pids[mine[0]], "restarted"
    )
    assert "exit_code" not in status  # unknown: it was not the new agent's child
    time.sleep(2 * 1.0)  # two reconcile ticks: a duplicate start would show up by now
    for name in names:
        if name != mine[0]:
            assert real_cluster.status(name)["pid"] == pids[name] and alive(pids[name])
    assert len(real_cluster.processes()) == len(names)  # no duplicates


def test_a_command_that_does_not_exist_fails_with_a_clear_condition(real_cluster: RealCluster) -> None:
    real_cluster.apply(
        """\
api_version: loadmaster/v1
kind: Deployment
metadata: {name: typo}
spec:
  services:
    - {name: svc, command: [no-such-command-here, --flag], resources: {cpu: 100m, memory: 64Mi}}
"""
    )
    status = real_cluster.wait_status("typo-svc-0", lambda s: s.get("phase") == "Failed", "Failed")
    condition = status["conditions"][-1]
    assert condition["reason"] == "StartFailed"
    assert condition["message"] == "command not found: no-such-command-here"


def test_a_process_that_exits_at_once_is_restarted_by_the_leader_until_its_budget_then_failed(
    real_cluster: RealCluster,
) -> None:
    real_cluster.apply(deployment("brief", "print('started', flush=True); raise SystemExit(3)"))
    # Since the lifecycle merge the leader (not the agent) restarts an exited replica, up to its restart
    # budget (3), then leaves it Failed (restart_exhausted): four starts in all, then none.
    status = real_cluster.wait_status("brief-svc-0", lambda s: s.get("phase") == "Failed", "Failed")
    assert status["exit_code"] == 3 and status["restart_count"] == 3
    condition = status["conditions"][-1]
    assert condition["reason"] == "restart_exhausted"
    assert condition["message"].startswith("exited again after 3 restarts"), condition
    time.sleep(3 * 1.0)  # three reconcile ticks: a crash loop would have started it again by now
    log = real_cluster.tmp / f"work-{status['node_ref']}" / "replicas" / "brief-svc-0" / "output.log"
    assert log.read_text().splitlines() == ["started"] * 4
    assert real_cluster.status("brief-svc-0")["pid"] == status["pid"]


def test_an_agent_whose_work_dir_is_not_writable_exits_with_a_clear_message(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a directory")
    args = loadmaster(
        "agent", "--name", "n-1", "--work-dir", str(blocked / "work"), "--server", "http://127.0.0.1:9"
    )
    result = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode != 0
    assert f"--work-dir {blocked / 'work'} is not writable" in result.stderr


def test_the_agent_publishes_its_probe_endpoint_pressure_and_throughput(real_cluster: RealCluster) -> None:
    wait_for(
        lambda: "network" in real_cluster.node("agent-a")["status"],
        "a throughput measurement",
        timeout_s=WAIT_S,
    )
    status = real_cluster.node("agent-a")["status"]
    answer = httpx.get(f"http://{status['probe_address']}/probe", timeout=5.0)
    assert answer.status_code == 200 and answer.json() == {"node": "agent-a", "ok": True}
    assert 0 <= status["pressure"]["cpu"] <= 1 and 0 < status["pressure"]["memory"] <= 1
    assert status["agent"]["driver"] == "process"
    assert parse_bits_per_second(status["network"]["download"]) >= 1_000_000
    assert parse_bits_per_second(status["network"]["upload"]) >= 1_000_000


def test_an_image_without_a_command_is_refused_at_apply_when_every_node_runs_processes(
    real_cluster: RealCluster,
) -> None:
    text = """\
api_version: loadmaster/v1
kind: Deployment
metadata: {name: boxed}
spec:
  services:
    - {name: api, image: "registry.example/api:1", resources: {cpu: 100m, memory: 64Mi}}
"""
    with real_cluster.server.client() as client:
        answer = client.post("/api/apply", content=text, headers={"Content-Type": "application/yaml"})
        stored = client.get("/api/deployments/boxed").status_code
    assert answer.status_code == 422
    [problem] = answer.json()["errors"]
    assert problem["path"] == "spec.services[0].command"
    assert problem["message"].startswith("required: image registry.example/api:1 cannot run here")
    assert stored == 404


def test_an_agent_with_a_token_bound_to_its_node_polls_and_runs_its_replicas(
    real_cluster: RealCluster,
) -> None:
    with real_cluster.server.client() as client:
        token = (
            client.post("/api/tokens", json={"role": "agent", "node": "agent-c"}).raise_for_status().json()
        )
    agent = Agent("agent-c", real_cluster.tmp / "work-agent-c", real_cluster.server)
    agent.token = token["token"]
    real_cluster.agents.append(agent.start())
    wait_for(lambda: "polling every" in agent.log(), "the agent to fall back to polling", timeout_s=WAIT_S)
    real_cluster.apply(
        deployment("pinned", SLEEPER).replace(
            "replicas: 1,", "replicas: 1, placement: hosts, hosts: [agent-c],"
        )
    )
    pid = running_pid(real_cluster, "pinned-svc-0")
    assert real_cluster.status("pinned-svc-0")["node_ref"] == "agent-c" and alive(pid)
