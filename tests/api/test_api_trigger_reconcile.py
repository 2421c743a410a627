"""``POST /api/admin/trigger-reconcile`` over real HTTP on 127.0.0.1: admin only, and it retries a
replica in its placement backoff at once (issue 14, LRS L2); a retry that fails as recorded is not
written (busy3)."""

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
        await api.register("n2", cpu="1")  # no room for it: its backoff stands, but its explanation changed
        refused = await api.user.post("/api/admin/trigger-reconcile")
        assert refused.status_code == 403
        assert (await api.admin.post("/api/admin/trigger-reconcile")).json() == {"triggered": True}

        async def retried() -> bool:
            return (await _why(api, "shop-api-0")).get("attempts") == ATTEMPTS_AT_CADENCE + 1

        await api.wait_until(retried, "a retry at once, not after five minutes")
        after = await _why(api, "shop-api-0")
        # it failed differently (two nodes now): a fresh backoff, from this attempt
        assert parse_timestamp(after["next_attempt_at"]) > parse_timestamp(before["next_attempt_at"])

        # Triggered again with nothing changed: retried (a failure counted: a tick's cycle, with the
        # replica in its backoff, attempts nothing), and failed as recorded, so nothing is written.
        failures = await _capacity_failures(api)
        assert (await api.admin.post("/api/admin/trigger-reconcile")).json() == {"triggered": True}

        async def attempted() -> bool:
            return await _capacity_failures(api) > failures

        await api.wait_until(attempted, "the triggered retry")
        kept = await _why(api, "shop-api-0")
        assert (kept["attempts"], kept["next_attempt_at"]) == (after["attempts"], after["next_attempt_at"])


async def _capacity_failures(api: Api) -> float:
    """``loadmaster_failures_total{reason="capacity"}``: one per failed attempt of the replica."""
    response = await api.anonymous.get("/metrics")
    assert response.status_code == 200, response.text
    prefix = 'loadmaster_failures_total{reason="capacity"} '
    lines = [line for line in response.text.splitlines() if line.startswith(prefix)]
    return float(lines[0].removeprefix(prefix)) if lines else 0.0
