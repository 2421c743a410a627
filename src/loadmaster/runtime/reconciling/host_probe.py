"""The probe of a NotReady node's host (``controllers/nodes/node_loss.py``): does the host answer at all?

``HostProbe`` is the one-method seam: ``HttpHostProbe`` calls the agent's ``GET /probe`` at the
address its agent published (``status.probe_address``); the timeline's simulated agents answer as the
file says. Whoever calls it bounds it with the probe timeout (5 s): no answer in time is "host down".
"""

from __future__ import annotations

from typing import Protocol

import httpx

# A probe is one request: anything longer than the node-loss probe timeout is cut off by the caller.
PROBE_REQUEST_TIMEOUT_S = 5.0


class HostProbe(Protocol):
    async def probe(self, node: str, address: str | None) -> bool:
        """True if ``node``'s host answered; False (or never returning) if it did not."""
        ...


class HttpHostProbe:
    """``GET http://<address>/probe``: any HTTP answer means the host is up. No address published, a
    refused connection or a timeout means nobody answered: host down."""

    def __init__(self, timeout_s: float = PROBE_REQUEST_TIMEOUT_S) -> None:
        self._timeout_s = timeout_s

    async def probe(self, node: str, address: str | None) -> bool:
        if not address:
            return False
        try:
            async with httpx.AsyncClient(timeout=self._timeout_s, trust_env=False) as client:
                await client.get(f"http://{address}/probe")
        except httpx.HTTPError:
            return False
        return True
