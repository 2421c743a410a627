"""Two servers on one etcd: one leads and writes; the other serves reads and answers writes with 503
not_leader naming the leader and where it listens; when the leader resigns, the other takes over."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadmaster.testing.etcd_cluster import EtcdCluster
from tests.api.conftest import Api, deployment, open_api

pytestmark = [pytest.mark.anyio, pytest.mark.etcd]


async def leader_and_follower(first: Api, second: Api) -> tuple[Api, Api]:
    async def someone_leads() -> bool:
        return first.server.plane.is_leader or second.server.plane.is_leader

    await first.wait_until(someone_leads, "a leader")
    return (first, second) if first.server.plane.is_leader else (second, first)


async def test_a_follower_reads_refuses_writes_and_takes_over_after_a_resign(
    etcd_server: EtcdCluster, etcd_prefix: str, tmp_path: Path
) -> None:
    settings = {"store": etcd_server.url, "etcd_prefix": etcd_prefix}
    async with (
        open_api(tmp_path / "a", identity="server-a", **settings) as a,
        open_api(tmp_path / "b", identity="server-b", **settings) as b,
    ):
        leader, follower = await leader_and_follower(a, b)
        await leader.register("n1")
        assert (await leader.apply(deployment(replicas=1))).status_code == 200
        await follower.wait_phases({"shop-api-0": "Scheduled"})  # reads on the follower see the leader's work

        refused = await follower.apply(deployment("other", replicas=1))
        assert refused.status_code == 503
        body = refused.json()
        assert (body["error"], body["leader"], body["leader_url"]) == (
            "not_leader",
            leader.server.plane.identity,
            leader.url,
        )
        status = (await follower.admin.get("/api/admin/leader-status")).json()
        assert (status["is_leader"], status["leader"]) == (False, leader.server.plane.identity)

        assert (await leader.admin.post("/api/admin/resign-leadership")).json()["resigned"] is True

        async def follower_leads() -> bool:
            return follower.server.plane.is_leader

        await follower.wait_until(follower_leads, "the follower to take over")
        assert (await follower.apply(deployment("other", replicas=1))).status_code == 200
        await follower.wait_phases({"shop-api-0": "Scheduled", "other-api-0": "Scheduled"})
