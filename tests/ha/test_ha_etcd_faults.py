"""Faults of etcd itself under load: the servers ride them out.

* The only etcd member restarts during a burst of applies: the servers reconnect, their caches'
  watches resume from where they were (an API watch stream opened before the restart delivers every
  change), and scheduling finishes with every replica placed once.
* One member of a three-member cluster (the raft leader, the one the servers talk to) is killed during
  a burst: scheduling carries on through the other two, under the same leader and term.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from loadmaster.testing.etcd_cluster import EtcdCluster
from tests.ha.event_stream import EventStream
from tests.ha.failover_client import WriteLog
from tests.ha.servers import ServerGroup, server_group
from tests.ha.stored_state import StoredState, placement_problems, read_state, wait_all_scheduled
from tests.ha.workload import NODES, apply_burst, job_replicas, register_nodes

pytestmark = pytest.mark.etcd

TTL_S = 3
JOBS = 48
SETTLE_S = 30.0
# An etcd restart (one member: about a second of outage) must not cost a lease TTL: the servers
# reconnect and carry on, so the work is done this soon after etcd is back.
RESUMED_WITHIN_S = 2.0
# Killing the raft leader: a write in flight to it waits out EtcdStore's 5 s request timeout before
# the loop that sent it tries again on another member.
CONTINUED_WITHIN_S = 5.0 + TTL_S


def cache_problems(group: ServerGroup, state: StoredState, store_revision: int) -> list[str]:
    """How each server's object cache (fed by its watch) differs from the store."""
    phases: dict[str, int] = {}
    for replica in state.replicas.values():
        phase = replica.get("status", {}).get("phase", "Pending")
        phases[phase] = phases.get(phase, 0) + 1
    problems = []
    for server in group.answering():
        with server.client(group.token) as client:
            stats = client.get("/api/admin/stats").raise_for_status().json()
        if stats["revision"] != store_revision:
            problems.append(
                f"{server.name}'s cache is at revision {stats['revision']}, the store at {store_revision}"
            )
        if stats["replicas_by_phase"] != phases:
            problems.append(f"{server.name}'s cache has {stats['replicas_by_phase']}, the store {phases}")
    return problems


def store_revision(group: ServerGroup) -> int:
    with group.servers[0].client(group.token) as client:
        return int(client.get("/api/ready").raise_for_status().json()["revision"])


def test_restarting_etcd_under_load_loses_no_event_and_scheduling_finishes(
    etcd_private: EtcdCluster, tmp_path: Path
) -> None:
    log = WriteLog()
    names = [f"job-{index:03d}" for index in range(JOBS)]
    expected = set().union(*(job_replicas(name) for name in names))
    with server_group(2, etcd_private.url, tmp_path, TTL_S) as group:
        register_nodes(group, log)
        leader, _ = group.wait_for_leader(timeout_s=10)
        follower = next(server for server in group.servers if server is not leader)
        stream = EventStream(follower, group.token, from_revision=1).start()
        with apply_burst(group, names, log, deadline_s=30) as burst:
            burst.wait_acknowledged(JOBS // 3)
            etcd_private.member(0).restart()
            restarted_at = time.monotonic()
            under_load = len(log.acknowledged) < NODES + JOBS  # applies were still coming in
        settle_s = wait_all_scheduled(group, len(expected), SETTLE_S)
        settled_after_s = time.monotonic() - restarted_at
        state = read_state(group)
        revision = store_revision(group)

        assert placement_problems(state, expected) == []
        assert state.workloads == set(names)
        assert under_load, "the burst was over before etcd restarted: nothing was tested under load"
        assert settled_after_s <= RESUMED_WITHIN_S, group.logs()
        # Every server's cache caught up with the store: its watch resumed where it broke off.
        time.sleep(0.2)  # the last write's event is on its way to the caches
        assert cache_problems(group, state, revision) == []
        # The API watch opened before the restart carried every replica's final state, in order.
        missed = {(name, r["metadata"]["revision"]) for name, r in state.replicas.items()} - stream.seen()
        stream.stop()
        assert missed == set() and stream.other == [] and stream.error is None, (missed, stream.other)
        revisions = [event.revision for event in stream.events]
        assert revisions == sorted(revisions), "the watch delivered events out of order"
        print(
            f"\netcd restart: all {len(expected)} replicas Scheduled {settled_after_s:.2f}s after etcd was "
            f"back ({settle_s:.2f}s after the burst ended); refusals: {dict(log.refusals)}"
        )


def test_killing_one_of_three_etcd_members_does_not_stop_scheduling(
    etcd_cluster3: EtcdCluster, tmp_path: Path
) -> None:
    raft_leader = etcd_cluster3.leader()
    # The raft leader first: gRPC talks to the first member, so the servers lose their connection too.
    ordered = [raft_leader, *(member for member in etcd_cluster3.members if member is not raft_leader)]
    url = "etcd://" + ",".join(member.endpoint for member in ordered)
    log = WriteLog()
    names = [f"job-{index:03d}" for index in range(JOBS)]
    expected = set().union(*(job_replicas(name) for name in names))
    with server_group(2, url, tmp_path, TTL_S) as group:
        register_nodes(group, log)
        with apply_burst(group, names, log, deadline_s=30) as burst:
            burst.wait_acknowledged(JOBS // 3)
            raft_leader.kill()
            killed_at = time.monotonic()
        wait_all_scheduled(group, len(expected), SETTLE_S)
        done_after_s = time.monotonic() - killed_at
        state = read_state(group)

        assert placement_problems(state, expected) == []
        assert state.workloads == set(names)
        # Two members keep the quorum: the leader never had a reason to stop leading.
        assert len(state.terms) == 1, (state.terms, group.logs())
        assert done_after_s <= CONTINUED_WITHIN_S, group.logs()
        print(
            f"\none of three etcd members killed: all {len(expected)} replicas Scheduled "
            f"{done_after_s:.2f}s after the kill; refusals: {dict(log.refusals)}"
        )
