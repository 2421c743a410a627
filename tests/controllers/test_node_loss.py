"""The node-loss policy as pure functions: the stages of a NotReady node, who moves, and the report."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

import pytest

from loadmaster.controllers.changes import MarkNodeLost, RecordNodeProbe, ReturnToPending
from loadmaster.controllers.nodes.node_loss import (
    AGENT_DOWN,
    ALL,
    HOST_DOWN,
    NONE,
    SINGLE_REPLICA,
    NodeLossSettings,
    ProbeAnswer,
    Stage,
    policy_moves,
    reconcile_node_loss,
    stage_of,
)
from loadmaster.controllers.nodes.node_loss_report import node_loss_report
from loadmaster.controllers.views import RUNNING, SCHEDULED, TERMINATING, NodeView
from tests.controllers.views_builders import NOW, job_replica, node, replica, service

SETTINGS = NodeLossSettings()
NOT_READY_AT = NOW - timedelta(seconds=100)


def lost_node(
    *,
    not_ready_s: float = 100.0,
    probe: str | None = None,
    probed_s: float | None = None,
    lost_s: float | None = None,
) -> NodeView:
    """n1, NotReady for ``not_ready_s``; probed and lost that many seconds ago when given."""

    def ago(seconds: float | None) -> datetime | None:
        return None if seconds is None else NOW - timedelta(seconds=seconds)

    base = node("n1", age_s=not_ready_s + 90, state="NotReady")
    return dataclasses.replace(
        base, not_ready_at=ago(not_ready_s), probe=probe, probed_at=ago(probed_s), lost_at=ago(lost_s)
    )


@pytest.mark.parametrize(
    ("view", "expected"),
    [
        pytest.param(lost_node(not_ready_s=10), Stage(due=NOW + timedelta(seconds=20)), id="waits-30s-first"),
        pytest.param(lost_node(not_ready_s=30), Stage(probe=True), id="probes-at-30s"),
        pytest.param(
            lost_node(probe=HOST_DOWN, probed_s=1),
            Stage(act=True, answer=HOST_DOWN, probed_at=NOW - timedelta(seconds=1)),
            id="host-down-acts-at-once",
        ),
        pytest.param(
            lost_node(probe=AGENT_DOWN, probed_s=10),
            Stage(answer=AGENT_DOWN, probed_at=NOW - timedelta(seconds=10), due=NOW + timedelta(seconds=20)),
            id="agent-down-waits-30s-more",
        ),
        pytest.param(
            lost_node(probe=AGENT_DOWN, probed_s=30),
            Stage(act=True, answer=AGENT_DOWN, probed_at=NOW - timedelta(seconds=30)),
            id="agent-down-acts-after-30s-more",
        ),
        pytest.param(lost_node(probe=HOST_DOWN, probed_s=5, lost_s=5), Stage(), id="lost-is-done"),
        pytest.param(node("n1"), Stage(), id="ready-has-no-stage"),
    ],
)
def test_a_not_ready_node_goes_through_its_stages_from_its_stored_times(
    view: NodeView, expected: Stage
) -> None:
    assert stage_of(view, NOW, SETTINGS, None) == expected


def test_a_fresh_probe_answer_counts_only_for_the_not_ready_spell_it_was_asked_for() -> None:
    view = lost_node(not_ready_s=35)
    current = ProbeAnswer(NOT_READY_AT + timedelta(seconds=65), HOST_DOWN, NOW)
    earlier = ProbeAnswer(NOT_READY_AT - timedelta(hours=1), HOST_DOWN, NOW)
    assert stage_of(view, NOW, SETTINGS, current).act
    assert stage_of(view, NOW, SETTINGS, earlier).probe


SERVICES = {
    ("shop", "db"): service(1, name="db"),
    ("shop", "api"): service(3),
    ("shop", "cache"): dataclasses.replace(service(2, name="cache"), node_loss_policy=ALL),
    ("shop", "side"): dataclasses.replace(service(1, name="side"), node_loss_policy=NONE),
}


@pytest.mark.parametrize(
    ("policy", "moved"),
    [
        pytest.param(SINGLE_REPLICA, ["shop-cache-0", "shop-db-0", "train-0"], id="single-replica"),
        pytest.param(ALL, ["shop-api-0", "shop-cache-0", "shop-db-0", "train-0"], id="all"),
        pytest.param(NONE, ["shop-cache-0"], id="none-but-a-service-that-says-all"),
    ],
)
def test_the_policy_picks_what_leaves_a_lost_node(policy: str, moved: list[str]) -> None:
    replicas = [
        replica(0, service="db", phase=RUNNING, node="n1"),
        replica(0, service="api", phase=RUNNING, node="n1"),
        replica(0, service="cache", phase=SCHEDULED, node="n1"),
        replica(0, service="side", phase=RUNNING, node="n1"),
        replica(host="n1", service="logs", phase=RUNNING, node="n1"),
        replica(1, service="db", phase=TERMINATING, node="n1"),
        job_replica(0, phase=RUNNING, node="n1"),
    ]
    assert sorted(r.name for r in replicas if policy_moves(r, SERVICES, policy)) == moved


def test_the_policy_acts_once_and_moves_each_replica_back_to_pending_naming_the_node() -> None:
    view = lost_node(probe=HOST_DOWN, probed_s=0)
    on_node = {"n1": [replica(0, service="db", phase=RUNNING, node="n1")]}
    plan = reconcile_node_loss([view], on_node, SERVICES, {}, NOW, SETTINGS)
    lost, moved = plan.changes
    assert (
        isinstance(lost, MarkNodeLost) and lost.replicas == ("shop-db-0",) and lost.policy == SINGLE_REPLICA
    )
    assert "NotReady 100s" in lost.message and "host down" in lost.message
    assert moved == ReturnToPending("shop-db-0", 7, "NodeLost", moved.message, "n1", NOT_READY_AT)
    assert "node n1 lost" in moved.message


def test_a_lost_node_moves_what_a_conflict_left_behind_without_acting_again() -> None:
    view = lost_node(probe=HOST_DOWN, probed_s=10, lost_s=10)
    on_node = {"n1": [replica(0, service="db", phase=RUNNING, node="n1")]}
    changes = reconcile_node_loss([view], on_node, SERVICES, {}, NOW, SETTINGS).changes
    assert [type(c).__name__ for c in changes] == ["ReturnToPending"]


def test_an_agent_down_answer_is_stored_and_the_next_stage_is_due_30s_later() -> None:
    view = lost_node(not_ready_s=31)
    answer = ProbeAnswer(NOT_READY_AT + timedelta(seconds=69), AGENT_DOWN, NOW - timedelta(seconds=1))
    plan = reconcile_node_loss([view], {}, SERVICES, {"n1": answer}, NOW, SETTINGS)
    assert plan.changes == [RecordNodeProbe("n1", 3, AGENT_DOWN, NOW - timedelta(seconds=1))]
    assert plan.next_due == NOW + timedelta(seconds=29)


def test_a_node_due_for_its_probe_is_named_for_probing() -> None:
    plan = reconcile_node_loss([lost_node(not_ready_s=30), node("n2")], {}, SERVICES, {}, NOW, SETTINGS)
    assert plan.probes == ["n1"] and plan.changes == [] and plan.next_due is None


def test_the_report_gives_the_exact_time_of_the_next_action() -> None:
    report = node_loss_report(lost_node(probe=AGENT_DOWN, probed_s=10), SETTINGS, NOW)
    assert report is not None
    assert report["next"]["action"] == "act"
    assert report["next"]["at"] == (NOW + timedelta(seconds=20)).isoformat().replace("+00:00", "Z")
    assert [step["what"] for step in report["steps"]][1] == "probe: host up, agent down"
    assert node_loss_report(node("n1"), SETTINGS, NOW) is None


def test_the_report_of_a_lost_node_lists_what_moved_and_has_no_next_action() -> None:
    report = node_loss_report(lost_node(probe=HOST_DOWN, probed_s=5, lost_s=5), SETTINGS, NOW, ["db-0"])
    assert report is not None and report["next"] is None and report["moved"] == ["db-0"]
