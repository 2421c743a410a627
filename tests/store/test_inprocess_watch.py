"""Watch behaviour of the in-process backends (memory, SQLite): bounded history, slow watchers, close.

These backends share watch_stream.py; the options exercised here (history size, per-watcher queue
size) are theirs, so these tests are not part of the cross-backend contract.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from loadmaster.store.interface import CompactedError, Event, Put, UnavailableError
from loadmaster.store.memory import MemoryStore
from loadmaster.store.sqlite import SqliteStore

pytestmark = pytest.mark.anyio

InProcessStore = MemoryStore | SqliteStore
Opener = Callable[..., InProcessStore]


@pytest.fixture(params=["memory", "sqlite"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    """A function that opens a store of the backend with the given options."""

    def opener(**options: Any) -> InProcessStore:
        if request.param == "memory":
            return MemoryStore(**options)
        return SqliteStore.open(tmp_path / "data", **options)

    return opener


async def next_events(events: AsyncIterator[Event], count: int) -> list[Event]:
    async with asyncio.timeout(5):
        return [await anext(events) for _ in range(count)]


async def test_history_beyond_the_retained_revisions_is_compacted(open_store: Opener) -> None:
    store = open_store(history_revisions=3)
    try:
        for i in range(6):
            await store.put("/k", str(i).encode())
        with pytest.raises(CompactedError) as error:
            await anext(store.watch("/", 3))
        assert (error.value.requested, error.value.oldest) == (3, 4)
        events = store.watch("/", 4)
        assert [event.value for event in await next_events(events, 3)] == [b"3", b"4", b"5"]
        await events.aclose()  # type: ignore[attr-defined]
    finally:
        await store.close()


async def test_a_watcher_that_falls_behind_catches_up_from_history_in_order(open_store: Opener) -> None:
    store = open_store(max_queued_events=2)
    try:
        events = store.watch("/w/", 1)
        await store.put("/w/0", b"")
        assert [event.revision for event in await next_events(events, 1)] == [1]
        # The watcher is now live and reads nothing while ten commits land: its queue overflows.
        for i in range(1, 11):
            await store.put(f"/w/{i}", b"")
        assert [event.revision for event in await next_events(events, 10)] == list(range(2, 12))
        await events.aclose()  # type: ignore[attr-defined]
    finally:
        await store.close()


async def test_a_commit_larger_than_the_watch_queue_is_still_delivered_whole(open_store: Opener) -> None:
    store = open_store(max_queued_events=2)
    try:
        events = store.watch("/w/", 1)
        await store.put("/w/first", b"")
        await next_events(events, 1)
        revision = await store.txn([Put(f"/w/{i}", b"") for i in range(5)])
        assert [(e.key, e.revision) for e in await next_events(events, 5)] == [
            (f"/w/{i}", revision) for i in range(5)
        ]
        await events.aclose()  # type: ignore[attr-defined]
    finally:
        await store.close()


async def test_a_watcher_behind_the_retained_history_gets_compacted_error(open_store: Opener) -> None:
    store = open_store(history_revisions=3, max_queued_events=2)
    try:
        events = store.watch("/w/", 1)
        await store.put("/w/a", b"")
        await next_events(events, 1)
        for _ in range(8):  # revisions 2..9; only 7..9 stay retained
            await store.put("/w/a", b"")
        assert [event.revision for event in await next_events(events, 2)] == [2, 3]  # what was queued
        with pytest.raises(CompactedError) as error:
            await anext(events)
        assert (error.value.requested, error.value.oldest) == (4, 7)
    finally:
        await store.close()


async def test_closing_the_store_ends_a_live_watch_as_unavailable(open_store: Opener) -> None:
    store = open_store()
    events = store.watch("/w/", 1)
    pending = asyncio.ensure_future(anext(events))
    await store.put("/w/a", b"")
    assert (await pending).key == "/w/a"
    waiting = asyncio.ensure_future(anext(events))
    await asyncio.sleep(0)  # let the watch start waiting for live events
    await store.close()
    with pytest.raises(UnavailableError, match="closed"):
        await waiting


async def test_compacting_to_a_future_revision_is_refused(open_store: Opener) -> None:
    store = open_store()
    try:
        first = await store.put("/a", b"1")
        second = await store.put("/a", b"2")
        with pytest.raises(ValueError, match="cannot compact"):
            await store.compact(second + 1)
        await store.compact(second)
        await store.compact(first)  # already compacted further: nothing to do
        with pytest.raises(CompactedError):
            await anext(store.watch("/", first))
        assert (await anext(store.watch("/", second))).value == b"2"
    finally:
        await store.close()


@pytest.mark.parametrize(
    ("prefix", "start", "error", "message"),
    [
        pytest.param("/", -1, ValueError, "start_revision", id="negative-start"),
        pytest.param("/", "1", TypeError, "start_revision", id="start-not-int"),
        pytest.param(b"/", 1, TypeError, "prefix", id="prefix-not-str"),
    ],
)
async def test_bad_watch_arguments_are_refused_at_once(
    open_store: Opener, prefix: Any, start: Any, error: type[Exception], message: str
) -> None:
    store = open_store()
    try:
        with pytest.raises(error, match=message):
            store.watch(prefix, start)
    finally:
        await store.close()
