"""A store that fails under a request is 503 ``unavailable`` with a message saying so, and the server
says it is not ready; the API never touches the store itself (the runtime reads it for the API)."""

from __future__ import annotations

import asyncio

import pytest

from tests.api.conftest import Api, sse_events

pytestmark = pytest.mark.anyio


async def test_a_read_from_a_store_that_went_away_is_503_unavailable_and_not_ready(api: Api) -> None:
    await api.server.plane.store.close()

    listed = await api.user.get("/api/nodes")
    ready = await api.anonymous.get("/api/ready")

    assert listed.status_code == 503, listed.text
    assert listed.json()["error"] == "unavailable"
    assert listed.json()["message"].startswith("the store cannot be reached: ")
    assert ready.status_code == 503 and ready.json()["ready"] is False
    assert ready.json()["message"].startswith("the store does not answer: ")


async def test_a_watch_whose_store_goes_away_ends_with_an_error_event(api: Api) -> None:
    lines: list[str] = []
    async with asyncio.timeout(10.0), api.user.stream("GET", "/api/watch") as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            lines.append(line)
            if line == ": stream open":
                await api.server.plane.store.close()
    # The stream ended by itself (the loop above returned): its last event says why.
    events = sse_events(lines)
    assert events and events[-1][0] == "error"
    assert events[-1][1]["error"] == "unavailable" and events[-1][1]["message"]
