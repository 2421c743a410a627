"""A real server (uvicorn on 127.0.0.1, a free port) per test, and HTTP clients with each role's token."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from loadmaster.api.serve import RunningServer, running_server
from loadmaster.runtime.config import ServerConfig
from loadmaster.runtime.plane.process.logging_setup import configure_logging

configure_logging()
WAIT_S = 10.0


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Api:
    server: RunningServer
    admin: httpx.AsyncClient
    user: httpx.AsyncClient
    agent: httpx.AsyncClient
    anonymous: httpx.AsyncClient

    @property
    def url(self) -> str:
        return self.server.url

    async def revision(self) -> int:
        return await self.server.plane.store.revision()

    async def apply(self, text: str, client: httpx.AsyncClient | None = None) -> httpx.Response:
        client = client or self.user
        return await client.post("/api/apply", content=text, headers={"Content-Type": "application/yaml"})

    async def register(self, name: str, cpu: str = "4", memory: str = "8Gi", **extra: Any) -> dict[str, Any]:
        body = {"name": name, "capacity": {"cpu": cpu, "memory": memory}, **extra}
        response = await self.agent.post("/api/nodes/register", json=body)
        assert response.status_code == 200, response.text
        return dict(response.json())

    async def replicas(self) -> dict[str, dict[str, Any]]:
        response = await self.user.get("/api/replicas")
        return {item["metadata"]["name"]: item for item in response.json()["items"]}

    async def wait_until(self, check: Callable[[], Awaitable[bool]], what: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT_S
        while not await check():
            if loop.time() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            await asyncio.sleep(0.02)

    async def wait_phases(self, expected: dict[str, str]) -> dict[str, dict[str, Any]]:
        seen: dict[str, dict[str, Any]] = {}

        async def check() -> bool:
            nonlocal seen
            seen = await self.replicas()
            return {name: obj["status"]["phase"] for name, obj in seen.items()} == expected

        await self.wait_until(check, f"replica phases {expected}")
        return seen


async def _client(url: str, token: str | None, keepalive: bool = True) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    # Without keep-alive, a server that closes idle connections fast (a short header timeout) can never
    # close one under a request the client is just sending on it.
    limits = httpx.Limits() if keepalive else httpx.Limits(max_keepalive_connections=0)
    return httpx.AsyncClient(base_url=url, headers=headers, timeout=10.0, limits=limits)


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    """A fresh server (memory store) for a test that changes things."""
    async with open_api(tmp_path) as opened:
        yield opened


@pytest.fixture(scope="module")
async def shared_api(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Api]:
    """One server for a module's tests that store nothing (refusals, reads, auth checks)."""
    async with open_api(tmp_path_factory.mktemp("shared")) as opened:
        yield opened


@asynccontextmanager
async def open_api(
    data_dir: Path, store: str = "memory", keepalive: bool = True, **settings: Any
) -> AsyncIterator[Api]:
    # The decide step in a thread unless a test asks for the worker process (test_decision_worker.py):
    # a process per test server would cost each test a second of CPU to start.
    settings.setdefault("decide_in", "thread")
    config = ServerConfig(
        data_dir=data_dir, listen="127.0.0.1:0", store=store, resign_pause_s=0.05, **settings
    )
    async with running_server(config) as server:
        admin = await _client(server.url, server.admin_token, keepalive)
        tokens = {}
        for role in ("user", "agent"):
            response = await admin.post("/api/tokens", json={"role": role})
            if response.status_code == 503:  # a standby (HA): the leader mints tokens for the shared store
                leader_url = response.json()["leader_url"]
                response = await admin.post(f"{leader_url}/api/tokens", json={"role": role})
            assert response.status_code == 200, response.text
            tokens[role] = response.json()["token"]
        clients = Api(
            server,
            admin,
            await _client(server.url, tokens["user"], keepalive),
            await _client(server.url, tokens["agent"], keepalive),
            await _client(server.url, None, keepalive),
        )
        try:
            yield clients
        finally:
            for client in (clients.admin, clients.user, clients.agent, clients.anonymous):
                await client.aclose()


def sse_events(lines: list[str]) -> list[tuple[str, Any]]:
    """(event, decoded data) of every complete event in ``lines`` (comments skipped)."""
    events, name, data = [], "message", []
    for line in lines:
        if not line:
            if data:
                events.append((name, json.loads("\n".join(data))))
            name, data = "message", []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            name = line.partition(":")[2].strip()
        elif line.startswith("data:"):
            data.append(line.partition(":")[2].removeprefix(" "))
    return events


def deployment(name: str = "shop", replicas: int = 2, cpu: str = "500m", extra: str = "") -> str:
    return f"""
api_version: loadmaster/v1
kind: Deployment
metadata: {{name: {name}, labels: {{team: web}}}}
spec:
  services:
    - name: api
      image: registry.example/api:1
      replicas: {replicas}
      resources: {{cpu: {cpu}, memory: 64Mi}}
      {extra}
"""
