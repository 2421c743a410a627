"""EtcdLeaderElector on a real etcd: one leader, fast hand-over, fencing of a deposed leader."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from loadmaster.runtime.plane.errors import NotLeaderError
from loadmaster.runtime.plane.leadership.leader_etcd import EtcdLeaderElector
from loadmaster.store.etcd import EtcdStore
from loadmaster.store.interface import FencedError, Put
from loadmaster.testing.etcd_cluster import EtcdCluster
from tests.etcd_fixtures import eventually

pytestmark = [pytest.mark.anyio, pytest.mark.etcd]

TTL_S = 2
# etcd checks for expired leases every 500 ms, and a standby then needs one watch event and one txn.
TAKEOVER_SLACK_S = 2.0


@pytest.fixture
async def two_servers(
    etcd_server: EtcdCluster, etcd_prefix: str
) -> AsyncIterator[tuple[EtcdStore, EtcdStore]]:
    """Two connections, as two loadmaster servers would have."""
    first = await EtcdStore.connect(etcd_server.url, prefix=etcd_prefix)
    second = await EtcdStore.connect(etcd_server.url, prefix=etcd_prefix)
    try:
        yield first, second
    finally:
        await first.close()
        await second.close()


async def cancel(task: asyncio.Task[object]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def test_of_two_electors_exactly_one_leads_and_both_see_who(
    two_servers: tuple[EtcdStore, EtcdStore],
) -> None:
    store_a, store_b = two_servers
    a = EtcdLeaderElector(store_a, "server-a", ttl_s=TTL_S)
    b = EtcdLeaderElector(store_b, "server-b", ttl_s=TTL_S)
    await a.campaign()
    b_campaign = asyncio.create_task(b.campaign())
    try:
        await asyncio.sleep(0.2)  # time enough for b's txn and watch; it must still be waiting
        assert (a.is_leader, b.is_leader, b_campaign.done()) == (True, False, False)
        assert await a.leader_id() == await b.leader_id() == "server-a"
        entry = await store_b.get("/leader")
        assert entry is not None and a.fence.create_revision == entry.create_revision
    finally:
        await cancel(b_campaign)
        await a.resign()


async def test_a_standby_takes_over_within_ttl_after_the_leader_stops_renewing_and_fences_it_out(
    two_servers: tuple[EtcdStore, EtcdStore],
) -> None:
    store_a, store_b = two_servers
    a = EtcdLeaderElector(store_a, "server-a", ttl_s=TTL_S)
    b = EtcdLeaderElector(store_b, "server-b", ttl_s=TTL_S)
    await a.campaign()  # and never runs its keepalive: like a server that hung right after winning
    last_renewal = time.monotonic()
    stale_fence = a.fence
    await store_a.put("/work", b"by a", fence=stale_fence)

    await asyncio.wait_for(b.campaign(), TTL_S + TAKEOVER_SLACK_S)
    assert time.monotonic() - last_renewal <= TTL_S + TAKEOVER_SLACK_S
    assert b.is_leader and not a.is_leader
    assert b.fence.create_revision > stale_fence.create_revision
    with pytest.raises(FencedError, match="/leader"):
        await store_a.txn([Put("/work", b"late write by a")], fence=stale_fence)
    assert await store_b.put("/work", b"by b", fence=b.fence) > 0
    entry = await store_b.get("/work")
    assert entry is not None and entry.value == b"by b"
    await b.resign()


async def test_a_renewing_leader_keeps_leading_and_its_resignation_hands_over_at_once(
    two_servers: tuple[EtcdStore, EtcdStore],
) -> None:
    store_a, store_b = two_servers
    lost: list[str] = []
    a = EtcdLeaderElector(store_a, "server-a", ttl_s=TTL_S, on_lost=lost.append)
    b = EtcdLeaderElector(store_b, "server-b", ttl_s=TTL_S)
    await a.campaign()
    a_run = asyncio.create_task(a.run())
    b_campaign = asyncio.create_task(b.campaign())
    try:
        await asyncio.sleep(TTL_S * 1.5)  # long enough that only renewals can have kept the lease
        assert a.is_leader and not b_campaign.done() and lost == []
        resigned_at = time.monotonic()
        await a.resign()
        assert not a.is_leader and lost == ["resigned"]
        await asyncio.wait_for(b_campaign, TTL_S)
        assert time.monotonic() - resigned_at < 0.5 * TTL_S  # well before a's lease could have expired
        assert await asyncio.wait_for(a_run, 1) == "resigned"
        assert await b.leader_id() == "server-b"
    finally:
        await cancel(b_campaign)
        await cancel(a_run)
        await b.resign()


@pytest.mark.parametrize(
    ("interference", "reason"),
    [
        pytest.param("delete", "leader key deleted", id="key-deleted"),
        pytest.param("overwrite", "rewritten by someone else", id="key-overwritten"),
    ],
)
async def test_the_leader_learns_at_once_when_its_key_is_taken_from_it(
    two_servers: tuple[EtcdStore, EtcdStore], interference: str, reason: str
) -> None:
    store_a, operator = two_servers
    lost: list[str] = []
    a = EtcdLeaderElector(store_a, "server-a", ttl_s=TTL_S, on_lost=lost.append)
    await a.campaign()
    a_run = asyncio.create_task(a.run())
    await asyncio.sleep(0.05)  # let run() open its watch on the key
    if interference == "delete":
        await operator.delete("/leader")
    else:
        await operator.put("/leader", b"intruder")
    took = await eventually(lambda: bool(lost), 1.0, "on_lost to fire")
    assert took < 1.0 and reason in lost[0] and not a.is_leader
    assert reason in await asyncio.wait_for(a_run, 1)
    assert await a.wait_lost() == lost[0]


async def test_a_leader_cut_off_from_etcd_steps_down_at_its_lease_deadline(etcd_private: EtcdCluster) -> None:
    store = await EtcdStore.connect(etcd_private.url)
    lost: list[str] = []
    a = EtcdLeaderElector(store, "server-a", ttl_s=TTL_S, on_lost=lost.append)
    member = etcd_private.member(0)
    try:
        await a.campaign()
        a_run = asyncio.create_task(a.run())
        frozen_at = time.monotonic()
        member.pause()  # renewals now time out: the leader cannot know whether its lease lives
        await eventually(lambda: bool(lost), TTL_S + 1.0, "on_lost after the lease deadline")
        # It gives up no later than TTL after its last successful renewal (<= TTL after the freeze).
        assert time.monotonic() - frozen_at <= TTL_S + 0.3
        assert not a.is_leader
        assert lost == ["lease expired: no keepalive succeeded within the TTL"]
        assert await asyncio.wait_for(a_run, 0.5) == lost[0]
    finally:
        member.resume()
        await store.close()


class SteppedClock:
    """A monotonic clock the test moves forward by hand (on top of real time)."""

    def __init__(self) -> None:
        self.offset_s = 0.0

    def __call__(self) -> float:
        return time.monotonic() + self.offset_s


async def test_a_leader_past_its_own_deadline_says_so_at_once_and_frees_its_lease_when_it_campaigns_again(
    two_servers: tuple[EtcdStore, EtcdStore],
) -> None:
    store_a, store_b = two_servers
    clock = SteppedClock()
    lost: list[str] = []
    a = EtcdLeaderElector(store_a, "server-a", ttl_s=TTL_S, on_lost=lost.append, clock=clock)
    b = EtcdLeaderElector(store_b, "server-b", ttl_s=TTL_S)
    await a.campaign()
    first_term = a.fence
    a_run = asyncio.create_task(a.run())
    b_campaign = asyncio.create_task(b.campaign())
    a_again: asyncio.Task[None] | None = None
    try:
        await asyncio.sleep(0.1)
        assert a.is_leader and not b_campaign.done()
        clock.offset_s = TTL_S + 1.0  # as after a long GC pause, while etcd still holds a's lease
        assert not a.is_leader  # at once, before any of a's loops has run
        ended = await asyncio.wait_for(a_run, TTL_S)
        assert ended == "lease expired: no keepalive succeeded within the TTL" and lost == [ended]
        campaigned = time.monotonic()
        a_again = asyncio.create_task(a.campaign())  # what a server does next: revokes the old lease first
        contenders = {a_again, b_campaign}
        done, _ = await asyncio.wait(contenders, timeout=TTL_S, return_when=asyncio.FIRST_COMPLETED)
        assert done and time.monotonic() - campaigned < 0.5  # nobody waited for the old lease's TTL
        winner = a if a_again in done else b
        assert winner.is_leader and winner.fence.create_revision > first_term.create_revision
    finally:
        for task in (b_campaign, a_again):
            if task is not None:
                await cancel(task)
        await a.resign()
        await b.resign()


async def test_a_leader_keeps_its_term_when_the_history_of_its_key_was_compacted(
    etcd_private: EtcdCluster,
) -> None:
    store = await EtcdStore.connect(etcd_private.url)
    lost: list[str] = []
    a = EtcdLeaderElector(store, "server-a", ttl_s=TTL_S, on_lost=lost.append)
    try:
        await a.campaign()
        for i in range(5):
            await store.put(f"/noise/{i}", b"x")
        await store.compact(await store.revision())  # run()'s watch from the key's revision is gone
        a_run = asyncio.create_task(a.run())
        await asyncio.sleep(0.1)
        assert a.is_leader and lost == []
        await store.delete("/leader")
        await eventually(lambda: bool(lost), 1.0, "on_lost after the key is deleted")
        # Which path sees the delete depends on whether run() had re-read the key after the compaction
        # yet (on a busy machine it may not have, 0.1 s in): either way the term ends because the key went.
        reason = await asyncio.wait_for(a_run, 1)
        assert any(why in reason for why in ("leader key deleted", "changed while its history was compacted"))
    finally:
        await store.close()


async def test_bad_elector_settings_and_misuse_are_refused_clearly(
    two_servers: tuple[EtcdStore, EtcdStore],
) -> None:
    store, _ = two_servers
    with pytest.raises(ValueError, match="ttl_s"):
        EtcdLeaderElector(store, "a", ttl_s=1)
    with pytest.raises(ValueError, match="identity"):
        EtcdLeaderElector(store, "")
    with pytest.raises(ValueError, match="key"):
        EtcdLeaderElector(store, "a", key="")
    elector = EtcdLeaderElector(store, "a", ttl_s=TTL_S)
    with pytest.raises(NotLeaderError):
        _ = elector.fence
    with pytest.raises(RuntimeError, match="campaign"):
        await elector.run()
    assert await elector.wait_lost() == "never elected"
    assert await elector.leader_id() is None
