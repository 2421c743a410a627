"""What an operator sees of a replica's life through the CLI: a failed image pull in ``get replicas``'
REASON and in ``why``, and a restart budget used up in RESTARTS."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner, Result

from loadmaster.cli.main import app
from tests.cli.in_process_server import InProcessServer
from tests.e2e.processes import wait_for

SHOP = """\
api_version: loadmaster/v1
kind: Deployment
metadata: {name: shop}
spec:
  services:
    - {name: api, image: "shop:2", replicas: 1, restart_budget: 0, resources: {cpu: 100m, memory: 64Mi}}
"""


class Live:
    def __init__(self, server: InProcessServer) -> None:
        self.server = server

    def cli(self, *args: str, stdin: str | None = None) -> Result:
        options = ["--server", self.server.url, "--token", self.server.token]
        return CliRunner().invoke(app, [*args, *options], input=stdin, env={"LOADMASTER_TOKEN": None})

    def api(self, method: str, path: str, body: Any = None) -> Any:
        headers = {"Authorization": f"Bearer {self.server.token}"}
        response = httpx.request(method, f"{self.server.url}{path}", json=body, headers=headers, timeout=30)
        return response.raise_for_status().json()

    def phase(self, name: str) -> str:
        return str(self.api("GET", f"/api/replicas/{name}")["status"]["phase"])


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Live]:
    server = InProcessServer(tmp_path).start()
    try:
        cluster = Live(server)
        cluster.api("POST", "/api/nodes/register", {"name": "n1", "capacity": {"cpu": "4", "memory": "8Gi"}})
        assert cluster.cli("apply", "-f", "-", stdin=SHOP).exit_code == 0
        wait_for(lambda: cluster.phase("shop-api-0") == "Scheduled", "shop-api-0 placed", 20)
        yield cluster
    finally:
        server.close()


def test_a_failed_pull_shows_in_get_replicas_and_why(live: Live) -> None:
    report = {"phase": "Scheduled", "reason": "image_pull_failed", "message": "shop:2: manifest unknown"}
    live.api("PUT", "/api/replicas/shop-api-0/status", report)
    table = live.cli("get", "replicas", "-o", "wide")
    assert table.exit_code == 0, table.output
    row = next(line.split() for line in table.stdout.splitlines() if line.startswith("shop-api-0"))
    assert row[1:3] == ["Scheduled", "n1"] and "image_pull_failed" in row
    why = live.cli("why", "shop-api-0")
    assert why.exit_code == 0, why.output
    assert "image_pull_failed" in why.stdout and "shop:2: manifest unknown" in why.stdout


def test_a_replica_past_its_restart_budget_shows_failed_with_its_reason(live: Live) -> None:
    live.api("PUT", "/api/replicas/shop-api-0/status", {"phase": "Running", "healthy": True})
    live.api("PUT", "/api/replicas/shop-api-0/status", {"phase": "Running", "exited": True, "exit_code": 3})
    wait_for(lambda: live.phase("shop-api-0") == "Failed", "shop-api-0 Failed (budget 0)", 20)
    table = live.cli("get", "replicas")
    row = next(line.split() for line in table.stdout.splitlines() if line.startswith("shop-api-0"))
    assert row[1] == "Failed" and row[-1] == "restart_exhausted"
