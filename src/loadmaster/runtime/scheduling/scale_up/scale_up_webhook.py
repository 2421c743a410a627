"""The optional scale-up webhook (server config ``scale_up_webhook``; LRS K1's ``POST .../scale-up``).

Each new scale-up request is POSTed as JSON (the stored record: id, template, tier, count, replicas,
reason, created_at, state) to the configured URL, once, in the background: the scheduler never waits
on a provisioner. A failed delivery (refused, timed out, a non-2xx answer) is logged and counted,
not retried: the request stays readable and closable over the API, which is the record a provisioner
can always fall back on (``GET /api/scale-up-requests?state=open``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import httpx
import structlog

log = structlog.get_logger(__name__)

# A provisioner answers at once (it queues the launch): a slow one must not pile up deliveries.
DELIVERY_TIMEOUT_S = 5.0


class ScaleUpWebhook:
    def __init__(self, url: str, timeout_s: float = DELIVERY_TIMEOUT_S) -> None:
        self.url = url
        self._timeout_s = timeout_s
        self._deliveries: set[asyncio.Task[None]] = set()
        self.delivered = 0
        self.failed = 0

    def send(self, records: Sequence[dict[str, Any]]) -> None:
        """Deliver each record in the background (the set keeps the tasks alive until they end)."""
        for record in records:
            task = asyncio.get_running_loop().create_task(self._deliver(record))
            self._deliveries.add(task)
            task.add_done_callback(self._deliveries.discard)

    async def _deliver(self, record: dict[str, Any]) -> None:
        try:
            async with httpx.AsyncClient(timeout=self._timeout_s) as client:
                response = await client.post(self.url, json=record)
            response.raise_for_status()
        except httpx.HTTPError as error:
            self.failed += 1
            log.warning("scale-up webhook failed", request=record.get("id"), url=self.url, error=str(error))
            return
        self.delivered += 1
        log.info("scale-up webhook delivered", request=record.get("id"), url=self.url)

    async def close(self) -> None:
        """Stop the deliveries still under way (the server is stopping)."""
        for task in list(self._deliveries):
            task.cancel()
        await asyncio.gather(*self._deliveries, return_exceptions=True)
