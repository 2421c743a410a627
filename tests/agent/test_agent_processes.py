"""The real agent runs replicas as processes: pid alive, own directory and environment, exits reported,
the leader's commands executed, stop signals and grace periods honoured, everything stopped on delete."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import psutil

from tests.agent.real_cluster import WAIT_S, RealCluster, alive
from tests.e2e.processes import wait_for


def deployment(name: str, script: str, replicas: int = 1, extra: str = "", grace: str = "1s") -> str:
    command = json.dumps([PYTHON, "-c", script])
    return f"""\
api_version: loadmaster/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  services:
    - {{name: svc, command: {command}, replicas: {replicas}, resources: {{cpu: 100m, memory: 256Mi}},
       stop_grace_period: {grace}{extra}}}
"""


# The interpreter itself, not a "python3" shim that execs it after starting helpers of its own.
PYTHON = sys.executable
SLEEPER = "import os, time; print('replica', os.environ['LOADMASTER_REPLICA'], flush=True); time.sleep(600)"


def running_pid(cluster: RealCluster, name: str) -> int:
    status = cluster.wait_status(name, lambda s: s.get("phase") == "Running" and s.get("pid"), "Running")
    return int(status["pid"])


def test_replicas_run_as_processes_in_their_own_directory_group_and_environment(
    real_cluster: RealCluster,
) -> None:
    real_cluster.apply(deployment("web", SLEEPER, replicas=2))
    for name in ("web-svc-0", "web-svc-1"):
        pid = running_pid(real_cluster, name)
        process = psutil.Process(pid)
        node = real_cluster.status(name)["node_ref"]
        assert alive(pid)
        assert os.getpgid(pid) == pid and os.getsid(pid) == pid  # its own session and process group
        assert process.cwd() == str(real_cluster.tmp / f"work-{node}" / "replicas" / name)
        assert process.environ()["LOADMASTER_REPLICA"] == name
        assert process.environ()["LOADMASTER_NODE"] == node
        assert "LOADMASTER_TOKEN" not in process.environ()
        # The memory request (256Mi) is its address-space limit.
        assert process.rlimit(psutil.RLIMIT_AS) == (256 * 1024 * 1024, 256 * 1024 * 1024)
        log = Path(process.cwd()) / "output.log"
        wait_for(lambda log=log: log.exists() and log.read_text().strip(), f"{name} output", timeout_s=WAIT_S)
        assert log.read_text().splitlines() == [f"replica {name}"]
        # No healthcheck: healthy once it has kept running --healthy-after (1 s here).
        real_cluster.wait_status(name, lambda s: s.get("healthy") is True, "healthy after 1 s up")


def test_a_killed_process_is_reported_exited_and_a_restart_command_starts_it_again(
    real_cluster: RealCluster,
) -> None:
    real_cluster.apply(deployment("crash", SLEEPER))
    first = running_pid(real_cluster, "crash-svc-0")
    os.kill(first, 9)
    # Since the lifecycle merge the leader's restart policy answers the agent's exited report by itself
    # (remove_from_routing, then restart: commands 1 and 2); the test no longer writes the command.
    restarted = real_cluster.wait_status(
        "crash-svc-0",
        lambda s: s.get("commands_done") == 2 and s.get("exited") is False and s.get("pid") != first,
        "restarted by the leader",
    )
    assert [c["type"] for c in restarted["commands"]] == ["remove_from_routing", "restart"]
    assert restarted["pid"] != first and alive(restarted["pid"])
    # One restart, counted 1; once the new process has kept running it is healthy and the count clears.
    healthy = real_cluster.wait_status("crash-svc-0", lambda s: s.get("healthy") is True, "healthy again")
    assert healthy["restart_count"] == 0 and healthy["pid"] == restarted["pid"]
    with real_cluster.server.client() as client:
        audit = client.get("/api/audit", params={"type": "replica_restarted"}).raise_for_status().json()
    restarts = [e for e in audit["items"] if e["object"].endswith("crash-svc-0")]
    assert [(e["details"]["reason"], e["details"]["restart_count"]) for e in restarts] == [("exited", 1)]
    assert "exit_code" not in restarted
    assert len(real_cluster.processes()) == 1, [
        (p.pid, p.cmdline(), p.ppid(), p.cwd()) for p in real_cluster.processes()
    ]


def test_a_remove_from_routing_command_marks_the_replica_not_routable(real_cluster: RealCluster) -> None:
    real_cluster.apply(deployment("route", SLEEPER))
    pid = running_pid(real_cluster, "route-svc-0")
    real_cluster.server.command("route-svc-0", 1, "remove_from_routing")
    status = real_cluster.wait_status("route-svc-0", lambda s: s.get("commands_done") == 1, "command done")
    assert status["routable"] is False
    assert status["pid"] == pid and alive(pid)  # still running: only out of routing


def test_a_process_that_traps_sigterm_writes_its_file_before_exiting(real_cluster: RealCluster) -> None:
    script = (
        "import signal, sys, time\n"
        "def bye(*_):\n    open('goodbye', 'w').write('SIGTERM'); sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, bye)\nprint('ready', flush=True)\ntime.sleep(600)"
    )
    real_cluster.apply(deployment("polite", script, grace="10s"))
    pid = running_pid(real_cluster, "polite-svc-0")
    directory = Path(psutil.Process(pid).cwd())
    wait_for(
        lambda: "ready" in (directory / "output.log").read_text(), "the trap to be set", timeout_s=WAIT_S
    )
    real_cluster.delete("deployments", "polite")
    wait_for(lambda: not alive(pid), "the process to stop", timeout_s=WAIT_S)
    assert (directory / "goodbye").read_text() == "SIGTERM"
    wait_for(lambda: "polite-svc-0" not in real_cluster.replicas(), "the replica to go", timeout_s=WAIT_S)


def test_a_process_that_ignores_sigterm_is_killed_after_its_grace_period(real_cluster: RealCluster) -> None:
    script = (
        "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('ready', flush=True)\ntime.sleep(600)"
    )
    real_cluster.apply(deployment("stubborn", script, grace="2s"))
    pid = running_pid(real_cluster, "stubborn-svc-0")
    directory = Path(psutil.Process(pid).cwd())
    wait_for(lambda: "ready" in (directory / "output.log").read_text(), "SIGTERM ignored", timeout_s=WAIT_S)
    asked = time.monotonic()
    real_cluster.delete("deployments", "stubborn")
    wait_for(lambda: not alive(pid), "SIGKILL after the grace period", timeout_s=WAIT_S, interval_s=0.02)
    took = time.monotonic() - asked
    # The lower bound is the behaviour (it got its whole grace period); no upper bound on a busy machine.
    assert took >= 2.0, f"killed after {took:.2f}s, before its 2s grace period"
    print(f"stop of a SIGTERM-ignoring process with a 2s grace period took {took:.2f}s")


def test_a_failing_healthcheck_uses_up_the_restart_budget_and_the_replica_ends_failed_and_stopped(
    real_cluster: RealCluster,
) -> None:
    check = f', healthcheck: {{command: [{PYTHON}, -c, "raise SystemExit(1)"], interval: 200ms, retries: 2}}'
    real_cluster.apply(deployment("sick", SLEEPER, extra=check))
    # Since the lifecycle merge the leader restarts a degraded replica (restart policy, budget 3); a check
    # that always fails uses the budget up and the replica ends Failed (restart_exhausted).
    status = real_cluster.wait_status("sick-svc-0", lambda s: s.get("phase") == "Failed", "Failed")
    assert status["healthy"] is False and status["restart_count"] == 3
    condition = status["conditions"][-1]
    assert (condition["status"], condition["reason"]) == ("False", "restart_exhausted")
    assert condition["message"].startswith("degraded again after 3 restarts"), condition
    # A Failed replica runs nothing: the agent stops the process the failing check was about.
    wait_for(lambda: not alive(status["pid"]), "the Failed replica's process to stop", timeout_s=WAIT_S)


def test_passing_tcp_and_http_healthchecks_make_replicas_healthy(real_cluster: RealCluster) -> None:
    script = (
        "import http.server, os\n"
        "server = http.server.HTTPServer(('127.0.0.1', 0), http.server.SimpleHTTPRequestHandler)\n"
        "open('port.tmp', 'w').write(str(server.server_port)); os.replace('port.tmp', 'port')\n"
        "server.serve_forever()"
    )
    real_cluster.apply(deployment("served", script))
    pid = running_pid(real_cluster, "served-svc-0")
    port_file = Path(psutil.Process(pid).cwd()) / "port"
    port = int(wait_for(lambda: port_file.exists() and port_file.read_text(), "the port", timeout_s=WAIT_S))
    # Two more replicas check the server's port, known only now.
    tcp = f", healthcheck: {{tcp: {port}, interval: 200ms, retries: 1}}"
    http = f", healthcheck: {{http: 'http://127.0.0.1:{port}/', interval: 200ms, retries: 1}}"
    real_cluster.apply(deployment("tcp-check", SLEEPER, extra=tcp))
    real_cluster.apply(deployment("http-check", SLEEPER, extra=http))
    for name in ("tcp-check-svc-0", "http-check-svc-0"):
        status = real_cluster.wait_status(name, lambda s: s.get("healthy") is True, "healthy")
        assert status["degraded"] is False


def test_deleting_a_deployment_stops_every_process(real_cluster: RealCluster) -> None:
    real_cluster.apply(deployment("many", SLEEPER, replicas=4))
    pids = [running_pid(real_cluster, f"many-svc-{index}") for index in range(4)]
    assert all(alive(pid) for pid in pids)
    real_cluster.delete("deployments", "many")
    wait_for(lambda: not any(alive(pid) for pid in pids), "every process to stop", timeout_s=WAIT_S)
    wait_for(lambda: not real_cluster.replicas(), "every replica to go", timeout_s=WAIT_S)
    assert real_cluster.processes() == []


def test_a_job_task_that_exits_zero_succeeds(real_cluster: RealCluster) -> None:
    real_cluster.apply(
        """\
api_version: loadmaster/v1
kind: Job
metadata: {name: once}
spec: {tasks: 1, command: [PYTHON, -c, "print('done')"], resources: {cpu: 100m, memory: 256Mi}}
""".replace("PYTHON", PYTHON)
    )
    status = real_cluster.wait_status("once-0", lambda s: s.get("phase") == "Succeeded", "Succeeded")
    assert status["exit_code"] == 0


def test_a_drained_replica_is_replaced_on_the_other_agent_and_the_replacement_keeps_its_process(
    real_cluster: RealCluster,
) -> None:
    real_cluster.apply(deployment("moved", SLEEPER))
    old = real_cluster.wait_status(
        "moved-svc-0", lambda s: s.get("phase") == "Running" and s.get("pid"), "Running"
    )
    source = old["node_ref"]
    with real_cluster.server.client() as client:
        client.post(f"/api/nodes/{source}/remove").raise_for_status()
    # X.next starts on the other agent; once it is Running and healthy the swap deletes X (its agent stops
    # the old process) and moves X.next to the key X with the same incarnation: the same process.
    swapped = real_cluster.wait_status(
        "moved-svc-0", lambda s: s.get("node_ref") not in (None, source) and s.get("pid"), "the swap"
    )
    wait_for(lambda: not alive(old["pid"]), "the old process to stop", timeout_s=WAIT_S)
    time.sleep(2.0)  # two reconcile ticks: a restart under the new name would show up by now
    new_pid = real_cluster.status("moved-svc-0")["pid"]
    assert new_pid == swapped["pid"] and alive(new_pid)
    # Started as the replacement and kept through the swap, not started again under the name X.
    assert psutil.Process(new_pid).environ()["LOADMASTER_REPLICA"] == "moved-svc-0.next"
    assert len(real_cluster.processes()) == 1
