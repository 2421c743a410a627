"""SIGSTOP the leader past its lease TTL, then SIGCONT it: a standby has taken over meanwhile, and the
woken server neither writes nor believes it leads; it stands by, and leads again when handed over to.

A frozen process cannot tell that time passed. What protects the store is twofold: the server
checks its lease deadline before every write it accepts (so the request that waited in its socket
during the pause is refused with 503 not_leader), and every write carries the fence of its term,
which etcd refuses once another term began (so even a write already under way cannot land).
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from loadmaster.runtime.plane.leadership.leader import DEFAULT_LEADER_KEY
from loadmaster.store.etcd import EtcdStore
from loadmaster.store.interface import Fence, FencedError
from loadmaster.testing.etcd_cluster import EtcdCluster
from tests.ha.failover_client import WriteLog
from tests.ha.servers import HaServer, ServerGroup, server_group
from tests.ha.stored_state import placement_problems, read_state, wait_all_scheduled
from tests.ha.workload import apply, job, job_replicas, register_nodes

pytestmark = pytest.mark.etcd

TTL_S = 4
FAILOVER_LIMIT_S = TTL_S + 3  # the lease runs out, then a watch event and one campaign on a busy machine
HANDOVER_LIMIT_S = TTL_S - 1.0  # a resign frees the leader key at once: no lease is waited out
PROBE_KEY = "/ha-test/late-write"  # outside every key the servers read


async def fenced_write(url: str, create_revision: int) -> int:
    """A write carrying the fence of the term that began at ``create_revision`` (FencedError if over)."""
    store = await EtcdStore.connect(url)
    try:
        return await store.put(PROBE_KEY, b"late", fence=Fence(DEFAULT_LEADER_KEY, create_revision))
    finally:
        await store.close()


def post_in_background(
    server: HaServer, token: str, body: Any
) -> tuple[threading.Thread, list[httpx.Response]]:
    answers: list[httpx.Response] = []

    def send() -> None:
        headers = {"Authorization": f"Bearer {token}"}
        answers.append(httpx.post(f"{server.url}/api/apply", json=body, headers=headers, timeout=15.0))

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread, answers


def stepped_down(group: ServerGroup, server: HaServer) -> bool:
    with server.client(group.token) as client:
        stats = client.get("/api/admin/stats").raise_for_status().json()
    return stats["scheduler_running"] is False


def apply_jobs(group: ServerGroup, log: WriteLog, names: list[str]) -> None:
    apply(group, log, *(job(name) for name in names))


def test_a_leader_paused_past_its_ttl_is_fenced_steps_down_and_can_lead_again(
    etcd_private: EtcdCluster, tmp_path: Path
) -> None:
    log = WriteLog()
    before, during, after = ([f"{phase}-{i}" for i in range(8)] for phase in ("before", "during", "after"))
    with server_group(2, etcd_private.url, tmp_path, TTL_S) as group:
        frozen, _ = group.wait_for_leader(timeout_s=10)
        frozen_term = frozen.leader_status(group.token)
        assert frozen_term is not None
        standby = next(server for server in group.servers if server is not frozen)
        register_nodes(group, log)
        apply_jobs(group, log, before)
        wait_all_scheduled(group, len(before), timeout_s=10)

        frozen.pause()
        successor, failover_s = group.wait_for_leader(FAILOVER_LIMIT_S + 1, among=[standby])
        assert failover_s <= FAILOVER_LIMIT_S
        apply_jobs(group, log, during)  # the successor works while the old leader is frozen
        wait_all_scheduled(group, len(before) + len(during), timeout_s=10)
        successor_term = successor.leader_status(group.token)
        assert successor_term is not None

        # This apply waits in the frozen server's socket and is read the moment it wakes up.
        sending, answers = post_in_background(frozen, group.token, {"items": [job("sent-while-frozen")]})
        time.sleep(0.2)  # long enough for the request to reach the frozen server's socket
        frozen.resume()
        sending.join(15)
        refused = answers[0]
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"] == "not_leader"
        assert (refused.json()["leader"], refused.json()["leader_url"]) == (
            successor_term["self"],
            successor.url,
        )
        status = frozen.leader_status(group.token)
        assert status is not None
        assert (status["is_leader"], status["leader"]) == (False, successor_term["self"])
        deadline = time.monotonic() + 10  # it notices at once; the margin is for a busy machine
        while not stepped_down(group, frozen):
            assert time.monotonic() < deadline, f"the woken server still runs its scheduler\n{frozen.log()}"
            time.sleep(0.02)
        # The store refuses the old term's fence, whoever sends it, and takes the current one.
        with pytest.raises(FencedError):
            asyncio.run(fenced_write(etcd_private.url, frozen_term["fence_revision"]))
        assert asyncio.run(fenced_write(etcd_private.url, successor_term["fence_revision"])) > 0

        # The woken server stands by: handed the leadership, it takes it at once and works.
        with successor.client(group.token) as client:
            resigned = client.post("/api/admin/resign-leadership").raise_for_status().json()
        assert resigned == {"resigned": True, "self": successor_term["self"]}
        _, handover_s = group.wait_for_leader(HANDOVER_LIMIT_S, among=[frozen])
        apply_jobs(group, log, after)
        expected = set().union(*(job_replicas(name) for name in (*before, *during, *after)))
        wait_all_scheduled(group, len(expected), timeout_s=10)
        state = read_state(group)

        assert placement_problems(state, expected) == []
        assert state.workloads == {*before, *during, *after}, "the refused apply must not be stored"
        fences = [term["details"]["fence_revision"] for term in state.terms]
        assert len(fences) == 3 and fences == sorted(fences), state.terms
        print(f"\npaused leader replaced after {failover_s:.2f}s; handed back by resign in {handover_s:.2f}s")
