"""Requests on a kept-alive connection are answered at once, not after the client's delayed ACK."""

from __future__ import annotations

import statistics
import time

import pytest

from tests.api.conftest import Api

pytestmark = pytest.mark.anyio

# Linux delays an ACK by up to 40 ms once a connection has left quick-ACK mode; a server whose
# responses wait for that ACK (Nagle) answers every kept-alive request in about 44 ms.
DELAYED_ACK_MS = 40.0


async def test_kept_alive_requests_do_not_wait_for_delayed_acks(api: Api) -> None:
    millis = []
    for _ in range(30):  # past Linux's quick-ACK start of the connection
        started = time.perf_counter()
        response = await api.user.get("/api/health")
        millis.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200
    assert statistics.median(millis[10:]) < DELAYED_ACK_MS / 2, millis
