"""The watch broadcast: one store watch for every live watcher; a watcher whose client stops reading
is dropped with a notice instead of holding changes (or the writer) without limit."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from loadmaster.runtime.requests.event_feed import FeedFailed
from loadmaster.runtime.requests.watch_broadcast import Dropped, Item, WatchBroadcast
from loadmaster.store.interface import Event
from loadmaster.store.memory import MemoryStore

pytestmark = pytest.mark.anyio


def kind_and_name(event: Event) -> Item[str] | None:
    kind, _, name = event.key.strip("/").partition("/")
    return kind, event.revision, name


def broadcast_over(store: MemoryStore, buffer_events: int) -> tuple[WatchBroadcast[str], Any]:
    plane = SimpleNamespace(store=store, closing=asyncio.Event())
    return WatchBroadcast(plane, "/", kind_and_name, buffer_events), plane  # type: ignore[arg-type]


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_every_watcher_gets_the_changes_of_its_kinds_from_one_store_watch() -> None:
    store = MemoryStore()
    broadcast, plane = broadcast_over(store, buffer_events=100)
    queues = await broadcast.feed(frozenset({"queues"}), idle_s=5)
    nodes = await broadcast.feed(frozenset({"nodes"}), idle_s=5)
    await store.put("/queues/q1", b"1")
    await store.put("/nodes/n1", b"1")
    await settle()
    assert await anext(queues) == ["q1"]
    assert await anext(nodes) == ["n1"]
    assert len(store._hub._subscriptions) == 1
    plane.closing.set()
    await queues.aclose()
    await nodes.aclose()


async def test_a_watcher_stuck_writing_past_its_buffer_is_dropped_and_told() -> None:
    store = MemoryStore()
    broadcast, plane = broadcast_over(store, buffer_events=10)
    slow = await broadcast.feed(frozenset({"queues"}), idle_s=5)
    fast = await broadcast.feed(frozenset({"queues"}), idle_s=5)
    await store.put("/queues/q0", b"1")
    assert await anext(slow) == ["q0"]  # slow is now "writing" its client: it is not resumed again
    assert await anext(fast) == ["q0"]
    seen_by_fast: list[str | FeedFailed | Dropped] = []
    for number in range(1, 30):
        await store.put(f"/queues/q{number}", b"1")
        await settle()
        seen_by_fast += await anext(fast)
    assert seen_by_fast == [f"q{number}" for number in range(1, 30)]  # the writer never waited for slow
    rest = await anext(slow)
    assert isinstance(rest[-1], Dropped)
    assert "limit is 10" in rest[-1].message
    with pytest.raises(StopAsyncIteration):
        await anext(slow)
    assert broadcast.watchers == 1
    plane.closing.set()
    await fast.aclose()
