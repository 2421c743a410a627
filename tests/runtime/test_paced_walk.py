"""A full controller pass walks in slices, the event loop getting a turn between two (paced_walk.py)."""

from __future__ import annotations

import asyncio

import pytest

from loadmaster.runtime.reconciling.paced_walk import WALK_SLICE, kept, slices

pytestmark = pytest.mark.anyio


async def test_a_walk_hands_the_loop_back_between_two_slices_and_only_then() -> None:
    seen: list[str] = []

    async def other_work() -> None:
        while True:
            seen.append("loop")
            await asyncio.sleep(0)

    other = asyncio.create_task(other_work())
    await asyncio.sleep(0)
    seen.clear()
    async for piece in slices(range(10), size=4):
        seen.append(f"slice of {len(piece)}")
    other.cancel()
    assert seen == ["slice of 4", "loop", "slice of 4", "loop", "slice of 2"]


async def test_kept_is_the_list_comprehension_without_the_nones_across_slices() -> None:
    items = list(range(WALK_SLICE * 2 + 3))
    assert await kept(items, lambda i: i * 2 if i % 3 else None) == [i * 2 for i in items if i % 3]
