"""Batched fenced writes: at most 127 ops per fenced transaction, conflicts set aside, fences honoured."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from loadmaster.runtime.plane.storage.batched_writes import WriteGroup, pack, write_groups
from loadmaster.store.interface import MAX_TXN_OPS, Fence, FencedError, Op, Put
from loadmaster.store.memory import MemoryStore

pytestmark = pytest.mark.anyio


class RecordingStore(MemoryStore):
    """A real MemoryStore that also remembers the size of every transaction it accepted."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    async def txn(self, ops: Sequence[Op], fence: Fence | None = None) -> int:
        revision = await super().txn(ops, fence)
        self.sizes.append(len(ops))
        return revision


async def test_three_hundred_updates_go_out_in_fenced_transactions_of_at_most_127_ops() -> None:
    store = RecordingStore()
    fence = Fence("/leader", await store.put("/leader", b"me"))
    store.sizes.clear()
    groups = [WriteGroup(i, (Put(f"/objects/replicas/r{i}", b"{}", expect_revision=0),)) for i in range(300)]
    outcome = await write_groups(
        store, groups, fence, extras=lambda batch: [Put("/counters/audit", b"{}")], extras_room=1
    )
    assert outcome.written == list(range(300)) and outcome.conflicts == []
    assert store.sizes == [MAX_TXN_OPS - 1, MAX_TXN_OPS - 1, 300 - 2 * (MAX_TXN_OPS - 2) + 1]
    assert outcome.revision == await store.revision()


async def test_a_conflicting_group_is_set_aside_and_the_rest_still_lands() -> None:
    store = MemoryStore()
    stale = await store.put("/objects/replicas/b", b"old")
    await store.put("/objects/replicas/b", b"changed meanwhile")
    groups = [
        WriteGroup("a", (Put("/objects/replicas/a", b"new", expect_revision=0),)),
        WriteGroup("b", (Put("/objects/replicas/b", b"new", expect_revision=stale),)),
        WriteGroup("c", (Put("/objects/replicas/c", b"new", expect_revision=0),)),
    ]
    outcome = await write_groups(store, groups, None)
    assert (outcome.written, outcome.conflicts) == (["a", "c"], ["b"])
    entry = await store.get("/objects/replicas/b")
    assert entry is not None and entry.value == b"changed meanwhile"


async def test_a_deposed_leader_writes_nothing() -> None:
    store = MemoryStore()
    fence = Fence("/leader", await store.put("/leader", b"me"))
    await store.delete("/leader")
    await store.put("/leader", b"someone else")
    before = await store.revision()
    with pytest.raises(FencedError):
        await write_groups(store, [WriteGroup("a", (Put("/objects/replicas/a", b"x"),))], fence)
    assert await store.revision() == before


def test_a_group_too_large_for_one_transaction_is_refused() -> None:
    with pytest.raises(ValueError, match="group 'big' has 200 ops"):
        pack([WriteGroup("big", tuple(Put(f"/k{i}", b"") for i in range(200)))], 127)
