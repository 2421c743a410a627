"""A server with the safety tick off (watch-only, LRS's ``RECONCILE_POLLING_ENABLED=false``) over real HTTP
on 127.0.0.1: it still schedules from watch events, and nothing runs on a timer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.api.conftest import Api, deployment, open_api

pytestmark = pytest.mark.anyio
# Short, so a tick that was not really off would show within the quiet spell below many times over.
FAST_TICK_S = 0.05
QUIET_SPELL_S = 40 * FAST_TICK_S


async def _why(api: Api, name: str) -> dict[str, Any]:
    response = await api.user.get(f"/api/replicas/{name}/why")
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_with_the_safety_tick_off_the_server_schedules_from_watch_events_only(tmp_path: Path) -> None:
    async with open_api(tmp_path, safety_tick_s=FAST_TICK_S, safety_tick_enabled=False) as api:
        await api.register("small", cpu="1")
        await api.apply(deployment(replicas=1, cpu="2"))  # fits nowhere yet

        async def first_attempt() -> bool:
            present = "shop-api-0" in await api.replicas()
            return present and (await _why(api, "shop-api-0")).get("attempts") == 1

        await api.wait_until(first_attempt, "the replica's first attempt, from the apply's events")
        # With a tick, attempts 2..4 would come at every tick (test_api_trigger_reconcile.py); without
        # one, nothing happens until something changes.
        await asyncio.sleep(QUIET_SPELL_S)
        assert (await _why(api, "shop-api-0")).get("attempts") == 1
        await api.register("big", cpu="4")  # a watch event: the node's registration
        placed = await api.wait_phases({"shop-api-0": "Scheduled"})
        assert placed["shop-api-0"]["status"]["node_ref"] == "big"
