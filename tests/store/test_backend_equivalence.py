"""Properties over random write programs: SQLite behaves exactly like the memory reference, and in
both, replaying the watch history rebuilds exactly the stored state."""

from __future__ import annotations

import asyncio
import itertools
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.store.interface import Delete, Entry, Event, Fence, Op, Put, Store, StoreError
from loadmaster.store.memory import MemoryStore
from loadmaster.store.sqlite import SqliteStore

pytestmark = pytest.mark.anyio

# Few keys, nested prefixes and small revisions, so compares, fences and prefix edges collide often.
keys = st.sampled_from(["/a", "/a/b", "/a/c", "/ab", "/b", "/b/a"])
expect_revisions = st.none() | st.integers(0, 8)
ops = st.one_of(
    st.builds(Put, keys, st.binary(max_size=3), expect_revisions), st.builds(Delete, keys, expect_revisions)
)
txns = st.tuples(
    st.lists(ops, max_size=4, unique_by=lambda op: op.key),
    st.none() | st.builds(Fence, keys, st.integers(1, 8)),
)
programs = st.lists(txns, min_size=1, max_size=12)

Program = list[tuple[list[Op], Fence | None]]
END_KEY = "/zz-end"  # written last, so a watch knows when it has replayed everything before it


async def run(store: Store, program: Program) -> list[tuple[str, int | str]]:
    """Apply each txn; record its revision or its error (type and message)."""
    outcomes: list[tuple[str, int | str]] = []
    for txn_ops, fence in program:
        try:
            outcomes.append(("ok", await store.txn(txn_ops, fence)))
        except StoreError as error:
            outcomes.append((type(error).__name__, str(error)))
    return outcomes


async def full_history(store: Store) -> list[Event]:
    end = await store.put(END_KEY, b"")
    history: list[Event] = []
    async with asyncio.timeout(5):
        async for event in store.watch("", 0):
            if event.revision == end:
                break
            history.append(event)
    return history


def replay(history: list[Event]) -> list[Entry]:
    state: dict[str, Entry] = {}
    for event in history:
        if event.value is None:
            del state[event.key]
        else:
            previous = state.get(event.key)
            create = event.revision if previous is None else previous.create_revision
            state[event.key] = Entry(event.key, event.value, create, event.revision)
    return [state[key] for key in sorted(state)]


async def observe(store: Store, program: Program) -> tuple[object, ...]:
    outcomes = await run(store, program)
    entries, revision = await store.list("")
    history = await full_history(store)
    # Invariants of one store: history rebuilds the state, and each successful write is one revision.
    assert replay(history) == entries
    assert sorted({event.revision for event in history}) == list(range(1, revision + 1))
    # A txn that changes nothing (only deletes of missing keys) returns the unchanged revision.
    committed = [rev for kind, rev in outcomes if isinstance(rev, int)]
    assert all(after in (before, before + 1) for before, after in itertools.pairwise([0, *committed]))
    assert revision == (committed[-1] if committed else 0)
    return outcomes, entries, revision, history


@settings(max_examples=30)
@given(programs)
async def test_sqlite_behaves_exactly_like_the_memory_reference(program: Program) -> None:
    memory = MemoryStore()
    try:
        expected = await observe(memory, program)
    finally:
        await memory.close()
    with tempfile.TemporaryDirectory() as data_dir:
        sqlite = SqliteStore.open(Path(data_dir))
        try:
            actual = await observe(sqlite, program)
        finally:
            await sqlite.close()
    assert actual == expected
