"""``kill -9`` the leading server during a burst of applies: a standby leads within TTL + 2 s, finishes
scheduling, and the result has every replica placed exactly once, no node over-committed, no apply lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadmaster.testing.etcd_cluster import EtcdCluster
from tests.ha.failover_client import WriteLog
from tests.ha.servers import HaServer, ServerGroup, server_group
from tests.ha.stored_state import placement_problems, read_state, wait_all_scheduled
from tests.ha.workload import (
    apply,
    apply_burst,
    deployment,
    deployment_replicas,
    job_replicas,
    register_nodes,
)

pytestmark = pytest.mark.etcd

TTL_S = 2
FAILOVER_LIMIT_S = TTL_S + 2  # the target
JOBS = 48  # one-task Jobs, one apply each: with the Deployment, 60 of the 64 slots the nodes have
DEPLOYMENT_REPLICAS = 12
SETTLE_S = 30.0  # how long scheduling may take after the last fault (it takes about a second)


def kill_leader(group: ServerGroup, leader: HaServer) -> tuple[HaServer, float]:
    """SIGKILL ``leader``; the survivor that takes over and the seconds from the kill until it leads."""
    leader.kill9()
    survivors = [server for server in group.servers if server.answers]
    return group.wait_for_leader(FAILOVER_LIMIT_S + 2, among=survivors)


@pytest.mark.parametrize(
    ("servers", "kills"),
    [
        pytest.param(2, 1, id="two-servers-one-kill"),
        pytest.param(3, 2, id="three-servers-two-kills-in-a-row"),
    ],
)
def test_killing_the_leader_mid_burst_hands_over_within_the_ttl_and_nothing_is_lost_or_repeated(
    servers: int, kills: int, etcd_private: EtcdCluster, tmp_path: Path
) -> None:
    log = WriteLog()
    names = [f"job-{index:03d}" for index in range(JOBS)]
    expected = deployment_replicas("web", DEPLOYMENT_REPLICAS).union(*(job_replicas(n) for n in names))
    failovers: list[float] = []
    with server_group(servers, etcd_private.url, tmp_path, TTL_S) as group:
        leader, _ = group.wait_for_leader(timeout_s=10)
        nodes = register_nodes(group, log)
        with apply_burst(group, names, log, deadline_s=30) as burst:
            # The Deployment's replicas are being created and placed while the leader dies.
            apply(group, log, deployment("web", DEPLOYMENT_REPLICAS))
            for kill in range(1, kills + 1):
                burst.wait_acknowledged(JOBS * kill // (kills + 2))
                leader, failover_s = kill_leader(group, leader)
                failovers.append(failover_s)
        wait_all_scheduled(group, len(expected), SETTLE_S)
        state = read_state(group)

        assert all(seconds <= FAILOVER_LIMIT_S for seconds in failovers), (failovers, group.logs())
        assert placement_problems(state, expected) == []
        assert set(log.acknowledged) == {*nodes, *names, "web"}
        assert state.workloads == {*names, "web"}, "an acknowledged apply was lost (or one appeared)"
        # One term per leader, each fenced above the one before: the dead leaders' terms ended for good.
        fences = [term["details"]["fence_revision"] for term in state.terms]
        assert len(fences) >= kills + 1 and fences == sorted(set(fences)), state.terms
        took = ", ".join(f"{seconds:.2f}s" for seconds in failovers)
        print(f"\n{servers} servers, TTL {TTL_S}s: failover after kill -9 took {took}; {dict(log.refusals)}")
