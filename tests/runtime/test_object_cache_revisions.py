"""The object cache never shows a transaction half applied: a waiter for a revision sees all of it, even
when the cache pauses for requests in the middle of a long burst of writes."""

from __future__ import annotations

import pytest

from loadmaster.manifests import QUEUE
from loadmaster.runtime.plane.object_cache import YIELD_EVERY_EVENTS, ObjectCache
from loadmaster.runtime.plane.storage.store_layout import encode_object, object_key
from loadmaster.store.interface import MAX_TXN_OPS, Put
from loadmaster.store.memory import MemoryStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def queue(name: str) -> Put:
    obj = {"api_version": "loadmaster/v1", "kind": QUEUE, "metadata": {"name": name}, "spec": {}}
    return Put(object_key(QUEUE, name), encode_object(obj), expect_revision=0)


async def test_a_waiter_sees_every_write_of_its_revision_across_a_pause() -> None:
    store = MemoryStore()
    cache = ObjectCache(store)
    await cache.start()
    try:
        per_txn = MAX_TXN_OPS - 1
        # Enough transactions that the pause (every YIELD_EVERY_EVENTS events) falls inside one of them.
        txns = YIELD_EVERY_EVENTS // per_txn + 2
        assert YIELD_EVERY_EVENTS % per_txn, "the pause must fall inside a transaction for this test"
        revisions = []
        for t in range(txns):
            revisions.append(await store.txn([queue(f"q-{t}-{i}") for i in range(per_txn)]))
        for t, revision in enumerate(revisions):
            await cache.wait_for(revision)
            seen = sum(1 for name in cache.objects[QUEUE] if name.startswith(f"q-{t}-"))
            assert seen == per_txn, f"transaction {t}: {seen} of {per_txn} writes visible at its revision"
    finally:
        await cache.close()
        await store.close()
