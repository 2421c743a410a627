"""A new leader resumes from the store alone: the work its predecessor left half done is finished at once.

The predecessor here is a control plane in this test's process that leads, registers nodes, stores a
Job and lets its controllers create the replicas, then dies before its scheduler places them (its
lease is never renewed, never revoked). Nothing happens in the store after that, so no event will
ever tell the successor (a real server process) that replicas wait: it must look by itself when its
term begins, rather than at its next safety tick (30 s).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from loadmaster.manifests import REPLICA
from loadmaster.manifests.documents import manifest_from_object
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.leader_etcd import EtcdLeaderElector
from loadmaster.runtime.object_writes import apply_manifests
from loadmaster.runtime.status_writes import register_node
from loadmaster.store.etcd import EtcdStore
from loadmaster.testing.etcd_cluster import EtcdCluster
from tests.ha.servers import server_group
from tests.ha.stored_state import placement_problems, read_state, wait_all_scheduled
from tests.ha.workload import job, job_replicas, node_body

pytestmark = pytest.mark.etcd

TTL_S = 2
TASKS = 6
# The successor first waits out the predecessor's lease; then placing six replicas takes milliseconds.
PLACED_WITHIN_S = TTL_S + 2


async def lead_and_die_before_scheduling(url: str) -> int:
    """Lead, store two nodes and a Job, create its replicas, then stop without placing them or
    resigning. Returns how many replicas were left Pending."""
    store = await EtcdStore.connect(url)  # the servers' default key prefix
    plane = ControlPlane(store, EtcdLeaderElector(store, "predecessor", ttl_s=TTL_S), backend="etcd")
    try:
        await plane.start(run_loops=False)  # leads, but runs no loop: the test drives the controllers
        for name in ("node-00", "node-01"):
            await register_node(plane, node_body(name), "admin")
        await apply_manifests(plane, [manifest_from_object(job("left", TASKS))], "admin")
        await plane.cache.wait_for(await store.revision())
        assert plane.controllers is not None
        outcome = await plane.controllers.reconcile_once(full=True)
        await plane.cache.wait_for(outcome.revision)
        pending = [c for c in plane.cache.objects[REPLICA].values() if "node_ref" not in c.obj["status"]]
        return len(pending)
    finally:
        await plane.close()
        await store.close()


def test_a_new_leader_places_what_its_predecessor_left_pending_without_waiting_for_an_event(
    etcd_private: EtcdCluster, tmp_path: Path
) -> None:
    assert asyncio.run(lead_and_die_before_scheduling(etcd_private.url)) == TASKS
    with server_group(1, etcd_private.url, tmp_path, TTL_S) as group:
        started = time.monotonic()
        group.wait_for_leader(timeout_s=TTL_S + 2)
        wait_all_scheduled(group, TASKS, timeout_s=PLACED_WITHIN_S)
        placed_after_s = time.monotonic() - started
        state = read_state(group)

        assert placement_problems(state, job_replicas("left", TASKS)) == []
        predecessor, successor_term = state.terms
        assert successor_term["details"]["fence_revision"] > predecessor["details"]["fence_revision"]
        print(f"\nthe successor placed the {TASKS} leftover replicas {placed_after_s:.2f}s after it started")
