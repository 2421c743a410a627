"""``loadmaster up --real --exit``: a server and one real agent on this machine run examples-real/ as
processes, show where they went, and leave nothing running when they stop."""

from __future__ import annotations

import subprocess
from pathlib import Path

import psutil

from tests.e2e.processes import free_port, loadmaster


def processes_under(root: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cwd", "status"]):
        cwd = process.info.get("cwd") or ""
        if cwd.startswith(str(root)) and process.info.get("status") != psutil.STATUS_ZOMBIE:
            found.append(process)
    return found


def test_up_real_runs_the_real_examples_on_this_machine_and_stops_them(tmp_path: Path) -> None:
    data_dir = tmp_path / "fresh"
    args = ["up", "--real", "--exit", "--data-dir", str(data_dir), "--listen", f"127.0.0.1:{free_port()}"]
    done = subprocess.run(loadmaster(*args), capture_output=True, text=True, timeout=120, check=False)
    try:
        assert done.returncode == 0, done.stdout + done.stderr
        assert "a real agent (node local" in done.stdout
        assert "deployments/hello created" in done.stdout
        assert "placed 3 of 3 replicas" in done.stdout
        assert "running 3 of 3 replicas" in done.stdout  # up --real waits for the processes to start
        rows = [line.split() for line in done.stdout.splitlines() if line.startswith("hello-")]
        assert sorted(row[0] for row in rows) == ["hello-ticker-0", "hello-ticker-1", "hello-web-0"]
        assert all(row[-1] == "local" for row in rows)
        assert (data_dir / "agent-work" / "replicas" / "hello-web-0").is_dir()
        assert processes_under(data_dir) == []  # --stop-replicas-on-exit: nothing outlives `up`
    finally:
        for process in processes_under(data_dir):
            process.kill()
