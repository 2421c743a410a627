"""A full controller pass in pieces: the event loop serves requests between two slices of a walk.

A full pass (the safety tick) walks every replica three times (collection, restarts, address slots),
every node and every owner: at 5,000 nodes, 10,000 replicas and a few thousand Jobs it held the loop
100-165 ms in one go (``bench/busy_cycle.py``: one such stall set the p99 of its 5-s slice). The pass
now runs with the object cache held (``ObjectCache.holding``: no event is applied meanwhile, so every
slice reads the same state) and hands the loop back every WALK_SLICE items. The slices are counted,
not timed, so a timeline (virtual clock) runs the same interleaving every time.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import TypeVar

Item = TypeVar("Item")
Kept = TypeVar("Kept")

WALK_SLICE = 1024  # items between two turns of the loop: ~1-3 ms of a walk's work


async def slices(items: Iterable[Item], size: int = WALK_SLICE) -> AsyncIterator[Sequence[Item]]:
    """``items`` (read once, up front) in slices of ``size``, the loop getting a turn between two."""
    listed = list(items)
    for start in range(0, len(listed), size):
        if start:
            await asyncio.sleep(0)
        yield listed[start : start + size]


async def kept(items: Iterable[Item], keep: Callable[[Item], Kept | None]) -> list[Kept]:
    """``[keep(item) for item in items]`` without the Nones, a slice at a time."""
    result: list[Kept] = []
    async for piece in slices(items):
        result.extend(value for item in piece if (value := keep(item)) is not None)
    return result
