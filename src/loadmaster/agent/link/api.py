"""The agent's side of the REST contract (docs/api.md): register, heartbeat, read assignments, report status.

Async (one event loop drives heartbeats and reports for every simulated node). Failures become
``AgentApiError`` with the HTTP status (None when the server could not be reached), so the loops can
decide between retrying, re-registering and ignoring a report the server no longer needs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
from httpx_sse import EventSource, ServerSentEvent

# Ordinary requests are small; a server that does not answer in this time is treated as unreachable.
REQUEST_TIMEOUT_S = 10.0


class AgentFatalError(Exception):
    """The agent cannot go on (bad token, refused registration); the message is one line for the user."""


class AgentApiError(Exception):
    """A refused or failed request; ``status`` is None when the server was not reached at all."""

    def __init__(
        self, status: int | None, code: str, message: str, unknown_fields: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.unknown_fields = unknown_fields  # body fields the server said it does not know (422)


class AgentApi:
    def __init__(self, server: str, token: str | None, transport: httpx.AsyncBaseTransport | None = None):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.server = server.rstrip("/")
        self._client = httpx.AsyncClient(
            base_url=self.server, headers=headers, timeout=REQUEST_TIMEOUT_S, transport=transport
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def register(self, body: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = await self._call("POST", "/api/nodes/register", json=body)
        return result

    async def heartbeat(self, node: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = await self._call("POST", f"/api/nodes/{node}/heartbeat", json=body or {})
        return result

    async def node_replicas(self, node: str) -> list[dict[str, Any]]:
        """The replicas whose ``status.node_ref`` is ``node`` (the agent role's view)."""
        return _items(await self._call("GET", f"/api/nodes/{node}/replicas"))

    async def all_replicas(self) -> tuple[list[dict[str, Any]], int]:
        """Every replica and the store revision of the list (needs a token that may read workloads)."""
        body = await self._call("GET", "/api/replicas")
        return _items(body), int(body.get("revision", 0)) if isinstance(body, dict) else 0

    async def report_status(self, replica: str, body: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = await self._call("PUT", f"/api/replicas/{replica}/status", json=body)
        return result

    async def download(self, size: int) -> int:
        """Bytes received from ``GET /api/agent/throughput?bytes=size`` (a throughput measurement)."""
        received = 0
        try:
            async with self._client.stream(
                "GET", "/api/agent/throughput", params={"bytes": str(size)}
            ) as answer:
                if answer.status_code >= 400:
                    await answer.aread()
                    raise _refusal(answer)
                async for chunk in answer.aiter_raw():
                    received += len(chunk)
        except httpx.TransportError as exc:
            raise AgentApiError(None, "unreachable", f"{self.server}: {exc or type(exc).__name__}") from exc
        return received

    async def upload(self, body: bytes) -> int:
        """Bytes the server says it received from a ``POST /api/agent/throughput`` of ``body``."""
        try:
            answer = await self._client.post("/api/agent/throughput", content=body)
        except httpx.TransportError as exc:
            raise AgentApiError(None, "unreachable", f"{self.server}: {exc or type(exc).__name__}") from exc
        if answer.status_code >= 400:
            raise _refusal(answer)
        return int(answer.json().get("bytes", 0))

    async def watch(self, kinds: str, from_revision: int) -> AsyncIterator[ServerSentEvent]:
        """The watch stream's events until the server closes it (``put``, ``delete``, ``relist``)."""
        params = {"kinds": kinds, "from_revision": str(from_revision)}
        # No read timeout: a quiet cluster sends nothing for long stretches.
        timeout = httpx.Timeout(REQUEST_TIMEOUT_S, read=None)
        try:
            async with self._client.stream("GET", "/api/watch", params=params, timeout=timeout) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise _refusal(response)
                async for event in EventSource(response).aiter_sse():
                    yield event
        except httpx.TransportError as exc:
            raise AgentApiError(None, "unreachable", f"{self.server}: {exc or type(exc).__name__}") from exc

    async def _call(self, method: str, path: str, json: Any = None) -> Any:
        try:
            response = await self._client.request(method, path, json=json)
        except httpx.TransportError as exc:
            raise AgentApiError(None, "unreachable", f"{self.server}: {exc or type(exc).__name__}") from exc
        if response.status_code >= 400:
            raise _refusal(response)
        return response.json()


def _items(body: Any) -> list[dict[str, Any]]:
    items = body.get("items", []) if isinstance(body, dict) else body
    return [item for item in items if isinstance(item, dict)]


def _refusal(response: httpx.Response) -> AgentApiError:
    try:
        body = response.json()
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    code = str(body.get("error", "http_error"))
    message = str(body.get("message") or response.text[:200] or response.reason_phrase)
    errors = body.get("errors")
    problems: list[Any] = errors if isinstance(errors, list) else []
    unknown = tuple(
        str(p.get("path"))
        for p in problems
        if isinstance(p, dict) and str(p.get("message", "")).startswith("unknown field")
    )
    return AgentApiError(response.status_code, code, message, unknown)
