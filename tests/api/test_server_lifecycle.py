"""The server as a process and over restarts: SQLite persistence, the data-dir lock, the admin token,
and ``loadmaster server`` stopping cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from loadmaster.api.serve import running_server
from loadmaster.runtime.config import ServerConfig
from loadmaster.store.interface import StoreError
from loadmaster.store.sqlite import SqliteStore
from tests.api.conftest import deployment, open_api

pytestmark = pytest.mark.anyio


async def test_a_restart_on_the_same_sqlite_dir_resumes_without_duplicates(tmp_path: Path) -> None:
    async with open_api(tmp_path, store="sqlite") as first:
        token = first.server.admin_token
        await first.register("n1")
        await first.apply(deployment(replicas=2))
        await first.wait_phases({"shop-api-0": "Scheduled", "shop-api-1": "Scheduled"})
        revision = await first.revision()
    mode = stat.S_IMODE((tmp_path / "admin-token").stat().st_mode)
    assert mode == 0o600
    async with open_api(tmp_path, store="sqlite") as second:
        assert second.server.admin_token == token and not second.server.admin_token_created
        assert await second.revision() > revision  # history kept; the new term wrote on top of it
        await second.agent.post("/api/nodes/n1/heartbeat", json={})
        await second.apply(deployment(replicas=3))
        placed = await second.wait_phases({f"shop-api-{i}": "Scheduled" for i in range(3)})
        assert placed["shop-api-0"]["metadata"]["created_at"] < placed["shop-api-2"]["metadata"]["created_at"]
        leaderships = (await second.user.get("/api/audit", params={"type": "leadership"})).json()["items"]
        assert len(leaderships) == 2


async def test_a_second_server_on_the_same_data_dir_refuses_to_start(tmp_path: Path) -> None:
    async with open_api(tmp_path / "dir", store="sqlite"):
        with pytest.raises(StoreError, match="in use by another loadmaster server"):
            async with running_server(ServerConfig(data_dir=tmp_path / "dir", listen="127.0.0.1:0")):
                pass


def test_loadmaster_server_starts_says_where_the_token_is_and_stops_cleanly_on_sigterm(
    tmp_path: Path,
) -> None:
    """With ``--log-format json`` every line the server writes is a JSON event, the announcements too."""
    server = [sys.executable, "-c", "from loadmaster.cli.main import main; main()", "server"]
    command = [*server, "--data-dir", str(tmp_path), "--listen", "127.0.0.1:0", "--log-format", "json"]
    process = subprocess.Popen(
        command, stderr=subprocess.PIPE, text=True, env={**os.environ, "NO_COLOR": "1"}
    )
    try:
        events: list[dict[str, object]] = []
        deadline = time.monotonic() + 20
        while not any(event["event"] == "admin token" for event in events):
            assert time.monotonic() < deadline and process.poll() is None, events
            line = process.stderr.readline() if process.stderr else ""
            if line:
                events.append(json.loads(line))
        url = str(next(event for event in events if event["event"] == "listening")["url"])
        token_event = next(event for event in events if event["event"] == "admin token")
        assert token_event["path"] == str(tmp_path / "admin-token") and token_event["state"] == "created"
        assert token_event["mode"] == "0600"
        assert httpx.get(f"{url}/api/ready").json()["ready"] is True
        second = subprocess.run(
            [*server, "--data-dir", str(tmp_path), "--listen", "127.0.0.1:0"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
        assert second.returncode == 1
        assert "is in use by another loadmaster server" in second.stderr
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
        rest = process.stderr.read() if process.stderr else ""
        shutdown = [json.loads(line) for line in rest.splitlines() if line.strip()]
        assert "shutting down" in [event["event"] for event in shutdown]
        assert not [event for event in events + shutdown if event["level"] in ("warning", "error")]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    asyncio.run(SqliteStore.open(tmp_path).close())  # opens: the lock was released on the way out
