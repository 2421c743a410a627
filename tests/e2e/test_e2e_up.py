"""``loadmaster up --exit`` from a clean data dir: server, simulated nodes, examples, placements, stop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.e2e.processes import free_port, loadmaster

EXAMPLE_REPLICAS = {
    "shop-api-0": "deployment/shop",
    "shop-api-1": "deployment/shop",
    "shop-worker-0": "deployment/shop",
    "shop-worker-1": "deployment/shop",
    "train-resnet-0": "job/train-resnet",
    "train-resnet-1": "job/train-resnet",
    "train-resnet-2": "job/train-resnet",
    "train-resnet-3": "job/train-resnet",
}


def test_up_starts_everything_places_every_example_replica_and_exits(tmp_path: Path) -> None:
    data_dir = tmp_path / "fresh"
    port = free_port()
    args = ["up", "--exit", "--data-dir", str(data_dir), "--listen", f"127.0.0.1:{port}", "--nodes", "3"]
    done = subprocess.run(
        loadmaster(*args), capture_output=True, text=True, timeout=90, check=False, cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "deployments/shop created" in out and "jobs/train-resnet created" in out
    assert "placed 8 of 8 replicas" in out
    table = {
        line.split()[0]: line.split()
        for line in out.splitlines()
        if line.split()[:1] and line.split()[0] in EXAMPLE_REPLICAS
    }
    assert set(table) == set(EXAMPLE_REPLICAS)
    for replica, (name, owner, phase, node) in table.items():
        assert owner == EXAMPLE_REPLICAS[replica]
        assert phase in ("Scheduled", "Running")
        assert node.startswith("sim-"), f"{name} has no node"
    # --exit says that nothing runs any more, how to start it again, and the lines to export.
    assert "loadmaster is running" not in out and "Ctrl-C stops" not in out
    assert f"stopped (--exit): the server at http://127.0.0.1:{port}" in out
    # paths under the current directory are shown relative to it, as a person would type them
    again = f"{sys.executable} -m loadmaster up --data-dir fresh --listen 127.0.0.1:{port}"
    assert f"start it again: {again}\n" in out
    assert f"  export LOADMASTER_SERVER=http://127.0.0.1:{port}\n" in out
    assert '  export LOADMASTER_TOKEN="$(cat fresh/admin-token)"\n' in out
    assert (data_dir / "admin-token").exists()
    assert oct((data_dir / "admin-token").stat().st_mode & 0o777) == "0o600"
    # --exit stopped the server and the agent: nothing listens on the port any more.
    with pytest.raises(httpx.TransportError):
        httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1.0)


def with_default_sigint(command: list[str]) -> list[str]:
    """``command`` started with SIGINT at its default (an exec keeps SIG_DFL, unlike an inherited SIG_IGN)."""
    reset = (
        "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
        "os.execv(sys.argv[1], sys.argv[1:])"
    )
    return [sys.executable, "-c", reset, *command]


def test_up_keeps_running_until_ctrl_c_then_stops_the_server_and_the_nodes(tmp_path: Path) -> None:
    port = free_port()
    args = ["up", "--data-dir", str(tmp_path / "data"), "--listen", f"127.0.0.1:{port}", "--nodes", "3"]
    # Ctrl-C in a terminal signals the whole foreground process group: up, its server and its agent.
    # (SIGINT is reset to its default: a test runner started in the background may have it ignored.)
    up = subprocess.Popen(
        with_default_sigint(loadmaster(*args)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert up.stdout is not None
        for line in up.stdout:
            if line.startswith("Ctrl-C stops"):
                break
        assert up.poll() is None, "up exited instead of running until Ctrl-C"
        assert httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2.0).status_code == 200
        os.killpg(up.pid, signal.SIGINT)
        _, err = up.communicate(timeout=30)
    finally:
        if up.poll() is None:
            os.killpg(up.pid, signal.SIGKILL)
            up.wait()
    assert up.returncode == 0, err
    assert "stopping" in err
    with pytest.raises(httpx.TransportError):
        httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1.0)
