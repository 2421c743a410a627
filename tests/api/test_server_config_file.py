"""``loadmaster server --config FILE`` with ``LOADMASTER_*`` overrides: a real server process on SQLite,
judged over HTTP by what the settings change (the restart budget, the time-slot lead time)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

SERVER = [sys.executable, "-c", "from loadmaster.cli.main import main; main()", "server"]
WAIT_S = 20.0


@contextmanager
def server_process(data_dir: Path, *args: str, env: dict[str, str]) -> Iterator[str]:
    """A ``loadmaster server`` on SQLite in ``data_dir``; yields its URL; stopped with SIGTERM."""
    command = [*SERVER, "--data-dir", str(data_dir), "--listen", "127.0.0.1:0", "--log-format", "json", *args]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env={**os.environ, **env})
    try:
        lines: list[str] = []
        deadline = time.monotonic() + WAIT_S
        while not (url := _listening_url(lines)):
            assert time.monotonic() < deadline and process.poll() is None, lines
            lines.append(process.stderr.readline() if process.stderr else "")
        yield url
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _listening_url(lines: list[str]) -> str | None:
    """The URL of the server's ``listening`` event (JSON log lines), once it has been written."""
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("event") == "listening":
            return str(event["url"])
    return None


def wait_for(check: object, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_settings_come_from_the_file_then_the_environment(tmp_path: Path) -> None:
    config = tmp_path / "loadmaster.yaml"
    config.write_text("restart_budget: 0\ntimeslot_lead_time: 10m\nscheduler: {profile: first_fit}\n")
    env = {"LOADMASTER_RESTART_BUDGET": "1"}  # overrides the file's 0
    with server_process(tmp_path / "data", "--config", str(config), env=env) as url:
        admin_token = (tmp_path / "data" / "admin-token").read_text().strip()
        admin = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {admin_token}"}, timeout=10)
        agent_token = admin.post("/api/tokens", json={"role": "agent"}).json()["token"]
        agent = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {agent_token}"}, timeout=10)
        assert agent.post(
            "/api/nodes/register", json={"name": "n1", "capacity": {"cpu": 4, "memory": "8Gi"}}
        ).is_success
        manifests = (
            "api_version: loadmaster/v1\nkind: Deployment\nmetadata: {name: web}\n"
            "spec: {services: [{name: api, image: 'web:1', replicas: 1}]}\n---\n"
            "api_version: loadmaster/v1\nkind: Job\nmetadata: {name: later}\nspec: {tasks: 1, command: [x], "
            "timeslot: {start: '2099-01-01T12:00:00Z', end: '2099-01-01T13:00:00Z'}}\n"
        )
        applied = admin.post("/api/apply", content=manifests, headers={"Content-Type": "application/yaml"})
        assert applied.is_success, applied.text

        def phase() -> str:
            answer = admin.get("/api/replicas/web-api-0")  # 404 until the controllers have created it
            return str(answer.json()["status"]["phase"]) if answer.is_success else "absent"

        wait_for(lambda: phase() == "Scheduled", "web-api-0 placed")
        agent.put("/api/replicas/web-api-0/status", json={"phase": "Running", "healthy": True})
        agent.put("/api/replicas/web-api-0/status", json={"phase": "Running", "degraded": True})
        wait_for(
            lambda: admin.get("/api/replicas/web-api-0").json()["status"].get("restart_count") == 1,
            "a restart",
        )
        agent.put("/api/replicas/web-api-0/status", json={"phase": "Running", "commands_done": 2})
        agent.put("/api/replicas/web-api-0/status", json={"phase": "Running", "degraded": True})
        wait_for(lambda: phase() == "Failed", "Failed after the environment's budget of 1")
        why = admin.get("/api/replicas/later-0/why").json()
        assert "considered for placement from 2099-01-01T11:50:00Z (10 min lead time)" in why["message"]


def test_a_bad_setting_is_refused_naming_the_key(tmp_path: Path) -> None:
    config = tmp_path / "loadmaster.yaml"
    config.write_text("scheduler: {profile: fastest}\n")
    bad_file = subprocess.run(
        [*SERVER, "--data-dir", str(tmp_path), "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert bad_file.returncode == 2
    assert "loadmaster.yaml: scheduler.profile" in bad_file.stderr
    config.write_text("restart_budget: 2\n")
    bad_env = subprocess.run(
        [*SERVER, "--data-dir", str(tmp_path), "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={**os.environ, "LOADMASTER_RESTART_BUDGET": "-1"},
    )
    assert bad_env.returncode == 2
    assert "restart_budget" in bad_env.stderr and "-1" in bad_env.stderr
