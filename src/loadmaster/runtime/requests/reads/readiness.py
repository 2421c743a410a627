"""Readiness (``/api/ready``): whether this server's store answers, within a bound."""

from __future__ import annotations

import asyncio
from typing import Any

from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.store.interface import StoreError


async def readiness(plane: ControlPlane, timeout_s: float) -> dict[str, Any]:
    """``{"ready": True, "revision": r}``, or ``{"ready": False, "message": why}`` when the store
    fails or takes longer than ``timeout_s`` to tell its revision."""
    try:
        async with asyncio.timeout(timeout_s):
            revision = await plane.store.revision()
    except (StoreError, TimeoutError) as error:
        reason = "timed out" if isinstance(error, TimeoutError) else str(error)
        return {"ready": False, "message": f"the store does not answer: {reason}"}
    return {"ready": True, "revision": revision}
