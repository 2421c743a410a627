"""The simulated agent against a real in-process server, with each kind of token it may be given."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from loadmaster.agent.host.node_shape import NodeShape
from loadmaster.agent.process import run_agent
from loadmaster.agent.simulation.settings import AgentSettings
from tests.cli.in_process_server import InProcessServer
from tests.e2e.processes import wait_for


@pytest.fixture
def server(tmp_path: Path) -> Iterator[InProcessServer]:
    running = InProcessServer(tmp_path).start()
    try:
        yield running
    finally:
        running.close()


def api(server: InProcessServer, method: str, path: str, body: object = None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {server.token}"}
    response = httpx.request(method, f"{server.url}{path}", json=body, headers=headers, timeout=30)
    return dict(response.raise_for_status().json())


@pytest.mark.parametrize("role", ["agent", "admin"])
def test_the_agent_registers_its_nodes_and_starts_what_is_scheduled_there(
    server: InProcessServer, role: str
) -> None:
    token = (
        server.token if role == "admin" else api(server, "POST", "/api/tokens", {"role": "agent"})["token"]
    )
    said: list[str] = []
    settings = AgentSettings(
        names=("a-01", "a-02"), shape=NodeShape({"cpu": "4", "memory": "8Gi"}), poll_s=0.05
    )
    stop = asyncio.Event()
    loop = asyncio.new_event_loop()
    agent = threading.Thread(
        target=loop.run_until_complete, args=(run_agent(server.url, token, settings, said.append, stop),)
    )
    agent.start()
    try:
        job = {
            "api_version": "loadmaster/v1",
            "kind": "Job",
            "metadata": {"name": "j"},
            "spec": {"tasks": 2, "command": ["x"], "resources": {"cpu": "3"}},
        }
        wait_for(lambda: len(api(server, "GET", "/api/nodes")["items"]) == 2, "both nodes registered", 10)
        api(server, "POST", "/api/apply", {"items": [job]})

        def running() -> bool:
            replicas = api(server, "GET", "/api/replicas")["items"]
            return len(replicas) == 2 and all(r["status"]["phase"] == "Running" for r in replicas)

        wait_for(running, "both replicas Running", 10)
    finally:
        loop.call_soon_threadsafe(stop.set)
        agent.join(10)
        loop.close()
    polling = any("polling each node" in line for line in said)
    # An agent token may not watch, so it polls; an admin token follows the watch stream.
    assert polling is (role == "agent")
    assert any(line.startswith("stopped: ") for line in said)
