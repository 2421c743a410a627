"""Waiting that a stop request cuts short, and fan-out with a bound (one agent speaks for many nodes)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

# The longest back-off between retries of an unreachable server (agent/link/retries.py: jittered doubling).
MAX_RETRY_S = 5.0

Item = TypeVar("Item")
Result = TypeVar("Result")


async def sleep_or_stop(stop: asyncio.Event, seconds: float) -> bool:
    """Wait ``seconds`` or until ``stop`` is set; True when stopping (loops read ``if await ...: return``)."""
    try:
        await asyncio.wait_for(stop.wait(), timeout=max(seconds, 0.0))
    except TimeoutError:
        return False
    return True


async def for_each_bounded(
    items: Iterable[Item], action: Callable[[Item], Awaitable[Result]], limit: int
) -> list[Result]:
    """``action`` on every item, at most ``limit`` at a time, results in the items' order.

    The bound keeps a thousand simulated nodes from opening a thousand connections to the server at once.
    """
    gate = asyncio.Semaphore(max(1, limit))

    async def gated(item: Item) -> Result:
        async with gate:
            return await action(item)

    return list(await asyncio.gather(*(gated(item) for item in items)))
