"""The watch broadcast: one store watch for every live watcher, written to each watcher's sink in one
pass per batch; a watcher whose client stops reading is dropped with a notice instead of holding
changes (or the writer) without limit, and one that catches up gets what it missed at once."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from loadmaster.runtime.requests.reads.event_feed import FeedFailed
from loadmaster.runtime.requests.reads.watch_broadcast import Dropped, Item, WatchBroadcast
from loadmaster.store.interface import Event
from loadmaster.store.memory import MemoryStore

pytestmark = pytest.mark.anyio


class FakeSink:
    """A client connection in memory: what was written, and whether the client stopped reading."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.keep_alives = 0
        self.stuck = False
        self.ending: FeedFailed | Dropped | str | None = "open"

    def unsent_bytes(self) -> int:
        return 1 if self.stuck else 0

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def keep_alive(self) -> None:
        self.keep_alives += 1

    def end(self, notice: FeedFailed | Dropped | None) -> None:
        self.ending = notice

    @property
    def names(self) -> list[str]:
        return b"".join(self.written).decode().split()


def kind_and_name(event: Event) -> Item | None:
    kind, _, name = event.key.strip("/").partition("/")
    return kind, event.revision, name.encode() + b" "


def broadcast_over(
    store: MemoryStore, buffer_events: int, idle_s: float = 5, publish_interval_s: float = 0.0
) -> tuple[WatchBroadcast, Any]:
    """A broadcast that publishes every batch at once unless ``publish_interval_s`` says otherwise."""
    plane = SimpleNamespace(store=store, closing=asyncio.Event())
    broadcast = WatchBroadcast(plane, "/", kind_and_name, buffer_events, idle_s, publish_interval_s)  # type: ignore[arg-type]
    return broadcast, plane


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_every_watcher_gets_the_changes_of_its_kinds_from_one_store_watch() -> None:
    store = MemoryStore()
    broadcast, plane = broadcast_over(store, buffer_events=100)
    queues, nodes = FakeSink(), FakeSink()
    await broadcast.join(frozenset({"queues"}), queues)
    await broadcast.join(frozenset({"nodes"}), nodes)
    await store.put("/queues/q1", b"1")
    await store.put("/nodes/n1", b"1")
    await settle()
    assert queues.names == ["q1"]
    assert nodes.names == ["n1"]
    assert len(store._hub._subscriptions) == 1
    plane.closing.set()
    await settle()
    assert queues.ending is None and nodes.ending is None  # the server closing ends them quietly
    assert broadcast.watchers == 0


async def test_watchers_of_the_same_kinds_are_written_the_same_bytes_once_joined() -> None:
    store = MemoryStore()
    broadcast, plane = broadcast_over(store, buffer_events=100)
    sinks = [FakeSink() for _ in range(3)]
    for sink in sinks:
        await broadcast.join(frozenset({"queues"}), sink)
    await store.put("/queues/q1", b"1")
    await settle()
    assert sinks[0].written == [b"q1 "]
    assert all(sink.written[0] is sinks[0].written[0] for sink in sinks)
    plane.closing.set()


async def test_a_watcher_stuck_writing_past_its_buffer_is_dropped_and_told() -> None:
    store = MemoryStore()
    broadcast, plane = broadcast_over(store, buffer_events=10)
    slow, fast = FakeSink(), FakeSink()
    await broadcast.join(frozenset({"queues"}), slow)
    await broadcast.join(frozenset({"queues"}), fast)
    await store.put("/queues/q0", b"1")
    await settle()
    assert slow.names == ["q0"]
    slow.stuck = True  # its client stops reading: nothing more is written to it
    for number in range(1, 30):
        await store.put(f"/queues/q{number}", b"1")
        await settle()
    assert fast.names == [f"q{number}" for number in range(30)]  # the writer never waited for slow
    assert slow.names == ["q0"]
    assert isinstance(slow.ending, Dropped)
    assert "limit is 10" in slow.ending.message
    assert broadcast.watchers == 1
    plane.closing.set()


async def test_a_watcher_that_catches_up_gets_what_it_missed_in_one_write() -> None:
    store = MemoryStore()
    broadcast, plane = broadcast_over(store, buffer_events=10)
    sink = FakeSink()
    watcher = await broadcast.join(frozenset({"queues"}), sink)
    sink.stuck = True
    for number in range(3):
        await store.put(f"/queues/q{number}", b"1")
        await settle()
    assert sink.written == []
    sink.stuck = False
    watcher.drained()
    assert sink.written == [b"q0 q1 q2 "]
    assert sink.ending == "open"
    plane.closing.set()


async def test_a_watcher_hears_nothing_from_before_it_joined() -> None:
    store = MemoryStore()
    broadcast, plane = broadcast_over(store, buffer_events=10)
    first = FakeSink()
    await broadcast.join(frozenset({"queues"}), first)
    await store.put("/queues/before", b"1")
    second = FakeSink()
    await broadcast.join(frozenset({"queues"}), second)
    await store.put("/queues/after", b"1")
    await settle()
    assert first.names == ["before", "after"]
    assert second.names == ["after"]
    plane.closing.set()


async def test_a_quiet_watcher_gets_keep_alives() -> None:
    store = MemoryStore()
    broadcast, plane = broadcast_over(store, buffer_events=10, idle_s=0.02)
    quiet = FakeSink()
    await broadcast.join(frozenset({"nodes"}), quiet)
    deadline = asyncio.get_running_loop().time() + 10
    while quiet.keep_alives < 2 and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.01)
    assert quiet.keep_alives >= 2
    assert quiet.written == []
    plane.closing.set()


async def test_a_store_failure_ends_every_watcher_with_a_notice() -> None:
    store = MemoryStore()
    broadcast, _ = broadcast_over(store, buffer_events=10)
    sink = FakeSink()
    await broadcast.join(frozenset({"queues"}), sink)
    await store.close()
    await settle()
    assert isinstance(sink.ending, FeedFailed)
    assert broadcast.watchers == 0


async def test_changes_within_the_publish_interval_reach_a_watcher_in_one_write() -> None:
    """A pass over the watchers is a socket write each: the changes that arrive while the last pass is
    fresher than the interval wait for the next one, and go out together. (A 2 s interval: the nine
    puts after the first take far less, however busy the machine.)"""
    store = MemoryStore()
    broadcast, plane = broadcast_over(store, buffer_events=100, publish_interval_s=2.0)
    sink = FakeSink()
    await broadcast.join(frozenset({"queues"}), sink)
    await store.put("/queues/q0", b"1")
    await settle()
    assert sink.written == [b"q0 "]  # after a quiet spell: at once
    for number in range(1, 10):
        await store.put(f"/queues/q{number}", b"1")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while len(sink.names) < 10 and loop.time() < deadline:
        await asyncio.sleep(0.05)
    assert sink.names == [f"q{number}" for number in range(10)]
    assert len(sink.written) == 2
    plane.closing.set()
