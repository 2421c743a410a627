"""Three etcd members, one killed: the store and the election carry on through the other two."""

from __future__ import annotations

import asyncio
import time

import pytest

from loadmaster.runtime.plane.leadership.leader_etcd import EtcdLeaderElector
from loadmaster.store.etcd import EtcdStore
from loadmaster.store.interface import Event, FencedError
from loadmaster.testing.etcd_cluster import EtcdCluster
from tests.etcd_fixtures import WatchRecorder, eventually, retrying

pytestmark = [pytest.mark.anyio, pytest.mark.etcd]

TTL_S = 3
RECOVERY_S = 10.0  # a new raft election takes one to two election timeouts (1 s each here)


async def test_killing_the_member_everyone_talks_to_keeps_reads_writes_watches_and_election_going(
    etcd_cluster3: EtcdCluster,
) -> None:
    raft_leader = etcd_cluster3.leader()
    # The raft leader first in the URL: gRPC connects to it, so killing it also breaks our connections.
    members = [raft_leader, *(member for member in etcd_cluster3.members if member is not raft_leader)]
    url = "etcd://" + ",".join(member.endpoint for member in members)
    store_a = await EtcdStore.connect(url, request_timeout_s=2)
    store_b = await EtcdStore.connect(url, request_timeout_s=2)
    lost: list[str] = []
    a = EtcdLeaderElector(store_a, "server-a", ttl_s=TTL_S, on_lost=lost.append)
    b = EtcdLeaderElector(store_b, "server-b", ttl_s=TTL_S)
    tasks: list[asyncio.Task[object]] = []
    try:
        await a.campaign()
        tasks.append(asyncio.create_task(a.run()))
        b_campaign = asyncio.create_task(b.campaign())
        tasks.append(b_campaign)
        start = await store_b.revision() + 1
        watch = WatchRecorder(store_b.watch("/w/", start))
        first = await store_a.put("/w/1", b"before", fence=a.fence)

        raft_leader.kill()
        killed_at = time.monotonic()
        second = await retrying(lambda: store_a.put("/w/2", b"after", fence=a.fence), RECOVERY_S)
        entry = await retrying(lambda: store_b.get("/w/2"), RECOVERY_S)
        assert entry is not None and entry.mod_revision == second
        await eventually(lambda: len(watch.events) == 2, RECOVERY_S, "the watch to deliver both writes")
        assert watch.events == [
            Event("put", "/w/1", b"before", first),
            Event("put", "/w/2", b"after", second),
        ]

        # Renewals reach the surviving members: a still leads a full TTL after the kill.
        await eventually(lambda: time.monotonic() - killed_at > TTL_S + 0.5, TTL_S + 1, "one TTL to pass")
        assert a.is_leader and lost == [] and not b_campaign.done()

        await a.resign()
        await asyncio.wait_for(b_campaign, RECOVERY_S)
        assert await b.leader_id() == "server-b"
        with pytest.raises(FencedError):
            await store_a.put("/w/3", b"late", fence=a.fence)
        assert await store_b.put("/w/3", b"by b", fence=b.fence) > second
        await watch.stop()
        assert watch.error is None
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await store_a.close()
        await store_b.close()
