"""Three servers on one etcd, seen from outside: every server agrees on who leads (leader-status and
``loadmaster status``); followers serve every read; every write a follower gets is refused with
503 not_leader naming the leader and its URL, changing nothing; a resign hands over at once."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from typer.testing import CliRunner

from loadmaster.cli.main import app
from loadmaster.testing.etcd_cluster import EtcdCluster
from tests.ha.failover_client import WriteLog
from tests.ha.servers import HaServer, ServerGroup, server_group
from tests.ha.stored_state import wait_all_scheduled
from tests.ha.workload import apply, job, node_body, register_nodes

pytestmark = pytest.mark.etcd

# No test here stops a server uncleanly, so the lease TTL can be long: a handover that waited it out
# would take 30 s, ten times the limit, and the limit leaves room for a busy machine's scheduling.
TTL_S = 30
HANDOVER_LIMIT_S = 3.0  # resigning revokes the lease: the next leader needs no TTL to pass
READS = [
    pytest.param("GET", "/api/jobs", id="list-jobs"),
    pytest.param("GET", "/api/jobs/seed", id="get-a-job"),
    pytest.param("GET", "/api/replicas", id="list-replicas"),
    pytest.param("GET", "/api/nodes", id="list-nodes"),
    pytest.param("GET", "/api/replicas/seed-0/why", id="why"),
    pytest.param("GET", "/api/audit", id="audit"),
    pytest.param("GET", "/api/info", id="info"),
    pytest.param("GET", "/api/admin/stats", id="stats"),
    pytest.param("POST", "/api/scheduling/preview", id="preview-stores-nothing-so-is-a-read"),
]
WRITES = [
    pytest.param("POST", "/api/apply", {"items": [job("refused")]}, id="apply"),
    pytest.param("DELETE", "/api/jobs/seed", None, id="delete"),
    pytest.param("POST", "/api/nodes/register", node_body("node-99"), id="register-node"),
    pytest.param("POST", "/api/nodes/node-00/heartbeat", {}, id="heartbeat"),
    pytest.param("POST", "/api/nodes/node-00/cordon", None, id="cordon"),
    pytest.param("PUT", "/api/replicas/seed-0/status", {"phase": "Running"}, id="replica-status"),
    pytest.param("POST", "/api/tokens", {"role": "user"}, id="new-token"),
    pytest.param("POST", "/api/admin/trigger-reconcile", None, id="trigger-reconcile"),
]


@dataclass
class Trio:
    group: ServerGroup
    token: str

    def roles(self) -> tuple[HaServer, list[HaServer], dict[str, Any]]:
        """The leader, the followers, and the leader's status."""
        leader, _ = self.group.wait_for_leader(timeout_s=10)
        status = leader.leader_status(self.token)
        assert status is not None
        return leader, [s for s in self.group.servers if s is not leader], status

    def request(self, server: HaServer, method: str, path: str, body: Any = None) -> Any:
        with server.client(self.token) as client:
            return client.request(method, path, json=body)


@pytest.fixture(scope="module")
def trio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Trio]:
    """Three servers sharing one etcd, two nodes and a scheduled one-task Job named seed."""
    with (
        EtcdCluster(size=1) as etcd,
        server_group(3, etcd.url, tmp_path_factory.mktemp("trio"), TTL_S) as group,
    ):
        log = WriteLog()
        register_nodes(group, log, count=2)
        apply(group, log, job("seed"))
        wait_all_scheduled(group, 1, timeout_s=10)
        yield Trio(group, group.token)


def test_every_server_names_the_same_leader_and_only_the_leader_says_it_leads(trio: Trio) -> None:
    leader, followers, status = trio.roles()
    statuses = trio.group.statuses(trio.group.servers)
    assert {s["leader"] for s in statuses.values() if s is not None} == {status["self"]}
    assert statuses[leader.name] == {**status, "is_leader": True}
    for follower in followers:
        seen = statuses[follower.name]
        assert seen is not None
        assert (seen["is_leader"], seen["since"], seen["fence_revision"]) == (False, None, None)
        assert seen["self"] != status["self"]


def test_loadmaster_status_on_any_server_shows_who_leads(trio: Trio) -> None:
    leader, followers, status = trio.roles()
    for server in (leader, *followers):
        shown = CliRunner().invoke(
            app,
            ["status", "--server", server.url, "--token", trio.token],
            env={"LOADMASTER_SERVER": None, "LOADMASTER_TOKEN": None, "COLUMNS": "200"},
        )
        assert shown.exit_code == 0, shown.output
        mine = " (this server)" if server is leader else ""
        assert f"leader: {status['self']}{mine}  " in shown.stdout


@pytest.mark.parametrize(("method", "path"), READS)
def test_a_follower_answers_a_read_as_the_leader_does(trio: Trio, method: str, path: str) -> None:
    leader, followers, _ = trio.roles()
    body = {"items": [job("previewed")]} if method == "POST" else None
    expected = trio.request(leader, method, path, body)
    assert expected.status_code == 200, expected.text
    for follower in followers:
        answer = trio.request(follower, method, path, body)
        assert answer.status_code == 200, answer.text
        if path in ("/api/jobs", "/api/jobs/seed", "/api/replicas", "/api/nodes"):
            assert answer.json() == expected.json()  # the same store, read at the same revision


@pytest.mark.parametrize(("method", "path", "body"), WRITES)
def test_a_follower_refuses_a_write_with_503_naming_the_leader_and_changes_nothing(
    trio: Trio, method: str, path: str, body: Any
) -> None:
    leader, followers, status = trio.roles()
    for follower in followers:
        revision = trio.request(leader, "GET", "/api/ready").json()["revision"]
        refused = trio.request(follower, method, path, body)
        assert refused.status_code == 503, refused.text
        answer = refused.json()
        assert (answer["error"], answer["leader"], answer["leader_url"]) == (
            "not_leader",
            status["self"],
            leader.url,
        )
        assert status["self"] in answer["message"]
        assert trio.request(leader, "GET", "/api/ready").json()["revision"] == revision


def test_resigning_hands_the_leadership_over_at_once_and_a_follower_has_nothing_to_resign(
    trio: Trio,
) -> None:
    leader, followers, status = trio.roles()
    not_leading = trio.request(followers[0], "POST", "/api/admin/resign-leadership").json()
    assert not_leading["resigned"] is False
    assert trio.roles()[0] is leader

    assert trio.request(leader, "POST", "/api/admin/resign-leadership").json() == {
        "resigned": True,
        "self": status["self"],
    }
    resigned_at = time.monotonic()
    successor, _ = trio.group.wait_for_leader(HANDOVER_LIMIT_S, among=followers)
    handover_s = time.monotonic() - resigned_at
    log = WriteLog()
    apply(trio.group, log, job("after-resign"))
    assert log.acknowledged == {"after-resign": successor.name}
    wait_all_scheduled(trio.group, 2, timeout_s=10)
    new_status = successor.leader_status(trio.token)
    assert new_status is not None and new_status["fence_revision"] > status["fence_revision"]
    assert {s["leader"] for s in trio.group.statuses(trio.group.servers).values() if s} == {
        new_status["self"]
    }
    print(f"\nresign -> {successor.name} leads after {handover_s:.3f}s")
