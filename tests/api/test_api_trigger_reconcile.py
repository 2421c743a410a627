"""``POST /api/admin/trigger-reconcile`` over real HTTP on 127.0.0.1: admin only, and it retries a
replica in its placement backoff at once (issue 14, LRS L2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loadmaster.manifests.timestamps import parse_timestamp
from loadmaster.runtime.scheduling.retry_policy import ATTEMPTS_AT_CADENCE
from tests.api.conftest import Api, deployment, open_api

pytestmark = pytest.mark.anyio
FAST_TICK_S = 0.05  # attempts 1-4 come at the safety tick: a fast one gets the replica into its backoff


async def _why(api: Api, name: str) -> dict[str, Any]:
    response = await api.user.get(f"/api/replicas/{name}/why")
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_trigger_reconcile_retries_a_replica_in_its_backoff_at_once(tmp_path: Path) -> None:
    async with open_api(tmp_path, safety_tick_s=FAST_TICK_S) as api:
        await api.register("n1", cpu="1")
        await api.apply(deployment(replicas=1, cpu="2"))

        async def backing_off() -> bool:
            why = await _why(api, "shop-api-0") if "shop-api-0" in await api.replicas() else {}
            return why.get("attempts") == ATTEMPTS_AT_CADENCE and why.get("next_attempt_at") is not None

        await api.wait_until(backing_off, "the replica's backoff")
        before = await _why(api, "shop-api-0")
        refused = await api.user.post("/api/admin/trigger-reconcile")
        assert refused.status_code == 403
        assert (await api.admin.post("/api/admin/trigger-reconcile")).json() == {"triggered": True}

        async def retried() -> bool:
            return (await _why(api, "shop-api-0")).get("attempts") == ATTEMPTS_AT_CADENCE + 1

        await api.wait_until(retried, "a retry at once, not after five minutes")
        after = await _why(api, "shop-api-0")
        # a fresh backoff, from this attempt
        assert parse_timestamp(after["next_attempt_at"]) > parse_timestamp(before["next_attempt_at"])
