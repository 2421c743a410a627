"""Property: over random write programs, EtcdStore behaves exactly like the memory reference.

Same revisions, same errors (type and message, so the same key is blamed), same final state, same
watch history. A fresh etcd starts at revision 1 with no write behind it, while the memory store
starts at 0, so the memory store first takes one write on a key the programs never touch.
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings

from loadmaster.store.etcd import EtcdStore
from loadmaster.store.interface import Event, Store
from loadmaster.store.memory import MemoryStore
from loadmaster.testing.etcd_cluster import EtcdCluster
from tests.store.test_backend_equivalence import Program, programs, run

pytestmark = [pytest.mark.anyio, pytest.mark.etcd]

PAD_KEY = "/~pad"  # no program key starts with it, and it sorts after them all
END_KEY = "/~end"  # written last, so a watch knows it has seen everything before it
FIRST_PROGRAM_REVISION = 2


async def history(store: Store) -> list[Event]:
    end = await store.put(END_KEY, b"")
    events: list[Event] = []
    async with asyncio.timeout(5):
        async for event in store.watch("", FIRST_PROGRAM_REVISION):
            if event.revision == end:
                return events
            events.append(event)
    raise AssertionError("the watch ended before the end marker")


async def observe(store: Store, program: Program) -> tuple[object, ...]:
    outcomes = await run(store, program)
    entries, revision = await store.list("")
    return outcomes, [entry for entry in entries if entry.key != PAD_KEY], revision, await history(store)


@settings(max_examples=25)
@given(programs)
async def test_etcd_behaves_exactly_like_the_memory_reference(program: Program) -> None:
    memory = MemoryStore()
    try:
        assert await memory.put(PAD_KEY, b"") == FIRST_PROGRAM_REVISION - 1
        expected = await observe(memory, program)
    finally:
        await memory.close()
    with EtcdCluster(size=1) as cluster:
        etcd = await EtcdStore.connect(cluster.url)
        try:
            assert await etcd.revision() == FIRST_PROGRAM_REVISION - 1
            actual = await observe(etcd, program)
        finally:
            await etcd.close()
    assert actual == expected
