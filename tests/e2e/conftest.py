"""One server and one simulated agent shared by the end-to-end tests that do not kill or restart them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from loadmaster.cli.main import app
from tests.e2e.processes import Process, Server, start_agent

AGENT_NODES = ("e2e-01", "e2e-02", "e2e-03", "e2e-04")


@dataclass
class Cluster:
    server: Server
    agent: Process

    def cli(self, *args: str, token: str | None = None, stdin: str | None = None) -> Result:
        """The real CLI in this process (typer's runner), pointed at the test server."""
        options = ["--server", self.server.url, "--data-dir", str(self.server.data_dir)]
        if token is not None:
            options += ["--token", token]
        env = {"LOADMASTER_SERVER": None, "LOADMASTER_TOKEN": None}
        return CliRunner().invoke(app, [*args, *options], input=stdin, env=env)


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    data_dir = tmp_path_factory.mktemp("e2e") / "data"
    server = Server(data_dir).start()
    agent = start_agent(server, len(AGENT_NODES), "cpu=8,memory=32Gi,gpu=2", "e2e", data_dir.parent)
    try:
        yield Cluster(server, agent)
    finally:
        agent_code = agent.stop()
        server_code = server.stop()
    # Both stop cleanly on SIGTERM (a crash here would otherwise go unnoticed).
    assert agent_code == 0, agent.log()
    assert server_code == 0, server.process.log() if server.process else ""


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
