"""``write_latest``: a write computed from what was read, retried on a fresher copy when another writer
got in between, refused as a conflict when the key never holds still, and fenced on every attempt."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from loadmaster.runtime.plane.errors import WriteConflictError
from loadmaster.runtime.plane.storage.store_retries import MAX_WRITE_ATTEMPTS, write_latest
from loadmaster.store.interface import ConflictError, Entry, Fence, Op, Put
from loadmaster.store.memory import MemoryStore

pytestmark = pytest.mark.anyio
KEY = "/objects/queues/q"


class RacingStore(MemoryStore):
    """A store where another writer changes ``KEY`` right after each of the first ``races`` reads."""

    def __init__(self, races: int) -> None:
        super().__init__()
        self.races = races
        self.reads = 0

    async def get(self, key: str) -> Entry | None:
        entry = await super().get(key)
        self.reads += 1
        if key == KEY and self.races > 0:
            self.races -= 1
            await super().put(KEY, f"other writer {self.races}".encode())
        return entry


async def leader_fence(store: MemoryStore) -> Fence:
    revision = await store.put("/leader", b"me")
    return Fence("/leader", revision)


def append_a(entry: Entry | None) -> tuple[Sequence[Op], bytes]:
    """The plan under test: the stored value with "+a" appended, comparing the revision read."""
    before = entry.value if entry is not None else b""
    after = before + b"+a"
    return [Put(KEY, after, expect_revision=entry.mod_revision if entry else 0)], after


async def test_a_write_that_lost_a_race_is_recomputed_from_the_fresher_copy() -> None:
    store = RacingStore(races=2)
    fence = await leader_fence(store)
    await store.put(KEY, b"start")

    async def fenced() -> Fence:
        return fence

    written, revision = await write_latest(store, KEY, fenced, append_a, what="queues/q", doing="written")

    assert store.reads == 3  # two reads that lost the race, one that won
    stored = await store.get(KEY)
    assert stored is not None and stored.value == b"other writer 0+a" == written
    assert revision == stored.mod_revision


async def test_a_key_that_never_holds_still_is_refused_as_a_conflict_after_the_last_attempt() -> None:
    store = RacingStore(races=MAX_WRITE_ATTEMPTS)
    fence = await leader_fence(store)

    async def fenced() -> Fence:
        return fence

    with pytest.raises(WriteConflictError, match="queues/q kept changing while being written; try again"):
        await write_latest(store, KEY, fenced, append_a, what="queues/q", doing="written")
    assert store.reads == MAX_WRITE_ATTEMPTS


async def test_a_plan_with_nothing_to_write_writes_nothing() -> None:
    store = MemoryStore()
    fence = await leader_fence(store)
    before = await store.revision()

    async def fenced() -> Fence:
        return fence

    result, revision = await write_latest(
        store, KEY, fenced, lambda entry: ([], entry), what="queues/q", doing="written"
    )

    assert (result, revision) == (None, None) and await store.revision() == before


async def test_a_conflict_on_another_key_than_the_one_read_is_not_retried() -> None:
    store = MemoryStore()
    fence = await leader_fence(store)
    await store.put("/counters/audit", b"1")
    attempts = 0

    async def fenced() -> Fence:
        return fence

    def stale_counter(entry: Entry | None) -> tuple[Sequence[Op], None]:
        nonlocal attempts
        attempts += 1
        return [Put(KEY, b"x", expect_revision=0), Put("/counters/audit", b"2", expect_revision=0)], None

    with pytest.raises(ConflictError):
        await write_latest(store, KEY, fenced, stale_counter, what="queues/q", doing="written")
    assert attempts == 1 and await store.get(KEY) is None


async def test_every_attempt_asks_for_the_fence_first() -> None:
    store = RacingStore(races=1)
    fence = await leader_fence(store)
    asked: list[int] = []

    async def fenced() -> Fence:
        asked.append(store.reads)
        return fence

    await write_latest(store, KEY, fenced, append_a, what="queues/q", doing="written")

    assert asked == [0, 1]  # before the first read, and before the read that followed the conflict
