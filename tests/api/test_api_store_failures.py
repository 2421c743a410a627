"""A store that fails under a request is 503 ``unavailable`` with a message saying so, and the server
says it is not ready; the API never touches the store itself (the runtime reads it for the API)."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api

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
