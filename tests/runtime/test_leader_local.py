"""LocalLeaderElector over the in-memory store: leads at once, still fenced, still told when it loses."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from loadmaster.runtime.plane.leadership.leader_local import LeaderKeyTakenError, LocalLeaderElector
from loadmaster.store.interface import Entry, FencedError
from loadmaster.store.memory import MemoryStore
from tests.etcd_fixtures import eventually

pytestmark = pytest.mark.anyio


@pytest.fixture
async def store() -> AsyncIterator[MemoryStore]:
    opened = MemoryStore()
    try:
        yield opened
    finally:
        await opened.close()


async def test_a_single_server_leads_at_once_with_the_leader_keys_create_revision_as_fence(
    store: MemoryStore,
) -> None:
    elector = LocalLeaderElector(store, "server-1")
    await elector.campaign()
    created = elector.fence.create_revision
    assert await store.get("/leader") == Entry("/leader", b"server-1", created, created)
    assert elector.is_leader and await elector.leader_id() == "server-1"
    assert await store.put("/work", b"x", fence=elector.fence) > 0


async def test_a_restarted_server_gets_a_new_fence_and_the_old_one_is_refused(store: MemoryStore) -> None:
    before_restart = LocalLeaderElector(store, "server-1")
    await before_restart.campaign()
    await store.put("/leader", b"server-1")  # an update keeps create_revision: the old fence would still pass
    after_restart = LocalLeaderElector(store, "server-1")
    await after_restart.campaign()
    assert after_restart.fence.create_revision > before_restart.fence.create_revision
    with pytest.raises(FencedError):
        await store.put("/work", b"late", fence=before_restart.fence)
    assert await store.put("/work", b"now", fence=after_restart.fence) > 0


@pytest.mark.parametrize(
    ("interference", "reason"),
    [
        pytest.param("delete", "leader key deleted", id="key-deleted"),
        pytest.param("overwrite", "leader key rewritten by someone else", id="key-overwritten"),
        pytest.param("close", "store unavailable", id="store-closed"),
    ],
)
async def test_the_term_ends_and_on_lost_fires_when_the_leader_key_stops_being_ours(
    store: MemoryStore, interference: str, reason: str
) -> None:
    lost: list[str] = []
    elector = LocalLeaderElector(store, "server-1", on_lost=lost.append)
    await elector.campaign()
    run = asyncio.create_task(elector.run())
    await asyncio.sleep(0)  # let run() subscribe to the key
    if interference == "delete":
        await store.delete("/leader")
    elif interference == "overwrite":
        await store.put("/leader", b"server-2")
    else:
        await store.close()
    assert (await asyncio.wait_for(run, 1)).startswith(reason)
    assert len(lost) == 1 and lost[0].startswith(reason) and not elector.is_leader


async def test_resigning_frees_the_key_and_ends_run(store: MemoryStore) -> None:
    lost: list[str] = []
    elector = LocalLeaderElector(store, "server-1", on_lost=lost.append)
    await elector.campaign()
    run = asyncio.create_task(elector.run())
    await elector.resign()
    assert await asyncio.wait_for(run, 1) == "resigned"
    assert lost == ["resigned"] and not elector.is_leader
    assert await store.get("/leader") is None
    await elector.resign()  # a second resign is a no-op
    assert lost == ["resigned"]


async def test_resigning_after_the_key_was_taken_leaves_the_new_holders_key_alone(store: MemoryStore) -> None:
    elector = LocalLeaderElector(store, "server-1")
    await elector.campaign()
    await store.delete("/leader")
    await store.put("/leader", b"server-2")
    await elector.resign()
    entry = await store.get("/leader")
    assert entry is not None and entry.value == b"server-2"


async def test_the_term_survives_compaction_of_the_leader_keys_history(store: MemoryStore) -> None:
    lost: list[str] = []
    elector = LocalLeaderElector(store, "server-1", on_lost=lost.append)
    await elector.campaign()
    for i in range(3):
        await store.put(f"/noise/{i}", b"x")
    await store.compact(await store.revision())
    run = asyncio.create_task(elector.run())
    await asyncio.sleep(0.01)
    assert elector.is_leader and lost == [] and not run.done()
    await store.delete("/leader")
    await eventually(lambda: bool(lost), 1, "on_lost after the compaction and the delete")
    assert await asyncio.wait_for(run, 1) == "leader key deleted"


class IntruderStore(MemoryStore):
    """A store where a second server re-creates the leader key right after this one deletes it."""

    async def delete(self, key: str, expect_revision: int | None = None, fence: object = None) -> int:
        revision = await super().delete(key, expect_revision)
        await super().put(key, b"intruder")
        return revision


async def test_a_second_writer_racing_for_the_key_is_an_error_not_a_silent_split() -> None:
    store = IntruderStore()
    await store.put("/leader", b"old")
    elector = LocalLeaderElector(store, "server-1")
    with pytest.raises(LeaderKeyTakenError, match="/leader"):
        await elector.campaign()
    assert not elector.is_leader
    await store.close()
