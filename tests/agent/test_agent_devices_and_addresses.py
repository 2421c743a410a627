"""The real agent hands a replica what its placement gave it: the GPU devices the scheduler assigned
(``CUDA_VISIBLE_DEVICES``, ``NVIDIA_VISIBLE_DEVICES``) and an address of its ``--address-pool``
(``LOADMASTER_REPLICA_ADDRESS``, reported as ``status.address``); a pool that shrinks under its replicas
fails those left without an address (``subnet_pool_exhausted``), and nothing restarts them."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent.real_cluster import WAIT_S, Agent, RealCluster, SqliteServer, alive
from tests.agent.test_agent_processes import PYTHON
from tests.e2e.processes import wait_for

NODE = "gpu-box"
GPUS = "nvidia:A100:gpu,compute x2"
POOL = "127.0.10.0/30"  # two host addresses: 127.0.10.1 and 127.0.10.2
# Prints what its placement gave it, then sleeps.
PRINTER = (
    "import os, time; "
    "print(os.environ.get('CUDA_VISIBLE_DEVICES'), os.environ.get('NVIDIA_VISIBLE_DEVICES'), "
    "os.environ.get('LOADMASTER_REPLICA_ADDRESS'), flush=True); time.sleep(600)"
)


def _agent(tmp_path: Path, server: SqliteServer, pool: str) -> Agent:
    agent = Agent(NODE, tmp_path / f"work-{NODE}", server)
    agent.extra = ["--gpus", GPUS, "--address-pool", pool]
    return agent.start()


@pytest.fixture
def gpu_cluster(tmp_path: Path) -> Iterator[RealCluster]:
    server = SqliteServer(tmp_path / "data").start()
    cluster = RealCluster(server, [_agent(tmp_path, server, POOL)], tmp_path)
    try:
        wait_for(lambda: _registered(cluster), "the agent to register", timeout_s=WAIT_S, interval_s=0.1)
        yield cluster
    finally:
        cluster.kill_everything()
        server.close()
    assert not cluster.processes(), "a replica process outlived its test"


def _registered(cluster: RealCluster) -> bool:
    with cluster.server.client() as client:
        return client.get(f"/api/nodes/{NODE}").status_code == 200


def _deployment(name: str, replicas: int, fields: str) -> str:
    command = json.dumps([PYTHON, "-c", PRINTER])
    return f"""\
api_version: loadmaster/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  services:
    - {{name: svc, command: {command}, replicas: {replicas}, resources: {{cpu: 100m, memory: 256Mi}},
       stop_grace_period: 1s, {fields}}}
"""


def _printed(cluster: RealCluster, name: str) -> list[str]:
    """What the replica's process printed: its CUDA, NVIDIA and address variables ("None": unset)."""
    log = cluster.tmp / f"work-{NODE}" / "replicas" / name / "output.log"
    wait_for(lambda: log.exists() and log.read_text().strip(), f"{name} output", timeout_s=WAIT_S)
    return log.read_text().split()


def _running(cluster: RealCluster, name: str) -> dict[str, Any]:
    return cluster.wait_status(name, lambda s: s.get("phase") == "Running" and s.get("pid"), "Running")


def test_the_agent_registers_its_declared_gpus_and_address_pool(gpu_cluster: RealCluster) -> None:
    node = gpu_cluster.node(NODE)
    assert node["spec"]["capacity"]["gpu"] == "2"
    assert node["spec"]["capacity"]["addresses"] == "2"
    assert node["spec"]["gpu_model"] == "A100"
    assert node["spec"]["gpu_driver"] == "nvidia"
    assert node["spec"]["gpu_capabilities"] == ["gpu", "compute"]


def test_two_replicas_on_a_two_gpu_agent_see_disjoint_devices(gpu_cluster: RealCluster) -> None:
    gpu_cluster.apply(_deployment("train", 2, "gpus: 1"))
    seen = {}
    for name in ("train-svc-0", "train-svc-1"):
        status = _running(gpu_cluster, name)
        cuda, nvidia, address = _printed(gpu_cluster, name)
        assert cuda == nvidia == ",".join(str(d) for d in status["devices"])
        assert address == "None"  # it did not ask for one
        seen[name] = cuda
    assert sorted(seen.values()) == ["0", "1"]


def test_replicas_that_ask_for_an_address_get_distinct_ones_and_a_third_waits(
    gpu_cluster: RealCluster,
) -> None:
    gpu_cluster.apply(_deployment("web", 3, "address: true"))
    statuses = {
        name: gpu_cluster.wait_status(name, lambda s: s.get("address"), "Running with its address")
        for name in ("web-svc-0", "web-svc-1")
    }
    printed = {name: _printed(gpu_cluster, name)[2] for name in statuses}
    assert sorted(printed.values()) == ["127.0.10.1", "127.0.10.2"]
    assert all(statuses[name]["address"] == printed[name] for name in statuses)
    assert all(_printed(gpu_cluster, name)[0] == "None" for name in statuses)  # no GPU asked for
    waiting = gpu_cluster.wait_status(
        "web-svc-2", lambda s: "addresses" in _phase(s).get("message", ""), "Pending for an address"
    )
    assert waiting["phase"] == "Pending"


def test_a_pool_that_shrinks_under_its_replicas_fails_those_left_without_an_address(
    gpu_cluster: RealCluster,
) -> None:
    gpu_cluster.apply(_deployment("web", 2, "address: true"))
    for name in ("web-svc-0", "web-svc-1"):
        gpu_cluster.wait_status(name, lambda s: s.get("address"), "Running with its address")
    by_slot = {gpu_cluster.status(n)["address_slot"]: n for n in ("web-svc-0", "web-svc-1")}
    kept, lost = by_slot[0], by_slot[1]
    lost_pid = gpu_cluster.status(lost)["pid"]
    old = gpu_cluster.agents[0]
    assert old.process is not None
    old.process.stop(signal.SIGKILL)
    # The agent comes back with a pool of one address (127.0.10.1: slot 0's address stays the same).
    gpu_cluster.agents[0] = _agent(gpu_cluster.tmp, gpu_cluster.server, "127.0.10.1/32")
    failed = gpu_cluster.wait_status(lost, lambda s: s.get("phase") == "Failed", "Failed")
    assert _phase(failed)["reason"] == "subnet_pool_exhausted"
    wait_for(lambda: not alive(lost_pid), f"{lost}'s process to be stopped", timeout_s=WAIT_S)
    assert gpu_cluster.status(kept)["phase"] == "Running"
    assert gpu_cluster.status(kept)["address"] == "127.0.10.1"
    # Failed for good: no restart command, no new process.
    assert gpu_cluster.status(lost).get("restart_count", 0) == 0
    assert not gpu_cluster.status(lost).get("commands")


def _phase(status: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in reversed(status.get("conditions", [])) if c.get("type") == "Phase")
