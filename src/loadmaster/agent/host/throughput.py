"""The network between this node and the server, measured (advisory, B4): ``status.network``.

download = bits received / seconds for ``GET /api/agent/throughput?bytes=N``; upload = bits sent /
seconds for a ``POST`` of M bytes. Sizes are small (a measurement must not load the server or the
node); on loopback the figure is a lower bound set mostly by the server's request handling.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from loadmaster.agent.link.api import AgentApi
from loadmaster.manifests.timestamps import format_timestamp

DOWNLOAD_BYTES = 2 * 1024 * 1024
UPLOAD_BYTES = 1024 * 1024
# How often the agent measures again (and once right after registering).
THROUGHPUT_EVERY_S = 600.0


def mbps(byte_count: int, seconds: float) -> str:
    """``"123Mbps"``: whole megabits per second, at least 1 (a throughput of 0 would mean no network)."""
    return f"{max(1, int(byte_count * 8 / max(seconds, 1e-6) / 1e6))}Mbps"


async def measure_network(api: AgentApi) -> dict[str, Any]:
    """``{download, upload, measured_at}``; AgentApiError when the server refuses or is not reached."""
    begun = time.perf_counter()
    received = await api.download(DOWNLOAD_BYTES)
    download_s = time.perf_counter() - begun
    begun = time.perf_counter()
    sent = await api.upload(bytes(UPLOAD_BYTES))
    upload_s = time.perf_counter() - begun
    return {
        "download": mbps(received, download_s),
        "upload": mbps(sent, upload_s),
        "measured_at": format_timestamp(datetime.now(UTC)),
    }
