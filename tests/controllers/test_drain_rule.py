"""The drain rule (controllers/nodes/drain.py): a replacement per non-global replica on the node, global ones
dropped, the node deleted once empty, a timeout at the deadline naming what did not move."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from loadmaster.controllers.changes import (
    CompleteDrain,
    NoteDrainBlocked,
    StartReplacement,
    TerminateReplica,
    TimeOutDrain,
)
from loadmaster.controllers.nodes.drain import reconcile_drain
from loadmaster.controllers.views import (
    DRAIN_TIMED_OUT,
    DRAINING,
    FAILED,
    PENDING,
    RUNNING,
    SCHEDULED,
    TERMINATING,
    DrainView,
    NodeView,
    ReplicaView,
)
from tests.controllers.views_builders import NOW, node, replica

DEADLINE = NOW + timedelta(minutes=5)


def draining(state: str = DRAINING) -> NodeView:
    return dataclasses.replace(
        node("n1", cordoned=True), drain=DrainView(state, NOW - timedelta(seconds=10), DEADLINE)
    )


def replacement_of(x: ReplicaView, phase: str = PENDING, on: str | None = None) -> ReplicaView:
    return dataclasses.replace(
        x, name=f"{x.name}.next", phase=phase, node_ref=on, replaces=x.name, replacement_reason="drain"
    )


def test_each_replica_on_the_node_gets_a_replacement_that_avoids_it_with_the_drain_deadline() -> None:
    on_node = [replica(0, phase=RUNNING, node="n1"), replica(1, phase=SCHEDULED, node="n1")]
    changes = reconcile_drain(draining(), on_node, {}, NOW)
    assert changes == [
        StartReplacement("shop-api-0", 7, "drain", None, None, ("n1",), DEADLINE),
        StartReplacement("shop-api-1", 7, "drain", None, None, ("n1",), DEADLINE),
    ]


def test_a_replica_whose_replacement_exists_is_not_given_a_second_one() -> None:
    x = replica(0, phase=RUNNING, node="n1")
    assert reconcile_drain(draining(), [x], {x.name: replacement_of(x)}, NOW) == []


def test_a_global_replica_on_the_node_is_stopped_not_moved() -> None:
    logs = replica(None, service="logs", host="n1", phase=RUNNING, node="n1")
    [change] = reconcile_drain(draining(), [logs], {}, NOW)
    assert isinstance(change, TerminateReplica)
    assert (change.name, change.reason) == ("shop-logs-n1", "NodeDrained")


def test_a_node_with_nothing_placed_or_stopping_on_it_is_deleted() -> None:
    finished = [replica(0, phase=FAILED, node="n1"), replica(1, phase=RUNNING, node="n2")]
    assert reconcile_drain(draining(), finished, {}, NOW) == [CompleteDrain("n1", 3)]


def test_a_replica_still_stopping_on_the_node_holds_the_removal_up() -> None:
    stopping = replica(0, phase=TERMINATING, node="n1")
    assert reconcile_drain(draining(), [stopping], {}, NOW) == []


def test_at_the_deadline_the_replicas_still_there_are_named_and_no_replacement_is_started() -> None:
    stuck, fresh = replica(0, phase=RUNNING, node="n1"), replica(1, phase=RUNNING, node="n1")
    [change] = reconcile_drain(draining(), [stuck, fresh], {stuck.name: replacement_of(stuck)}, DEADLINE)
    assert isinstance(change, TimeOutDrain)
    assert (change.node, change.not_moved) == ("n1", ("shop-api-0", "shop-api-1"))
    assert "shop-api-0 (replacement Pending)" in change.message
    assert "shop-api-1 (no replacement)" in change.message
    assert "stays cordoned" in change.message


def test_a_replica_whose_replacement_runs_at_the_deadline_is_not_counted_as_stuck() -> None:
    x = replica(0, phase=RUNNING, node="n1")
    swapping = {x.name: replacement_of(x, RUNNING, "n2")}
    assert reconcile_drain(draining(), [x], swapping, DEADLINE) == []


def test_a_timed_out_drain_does_nothing_more() -> None:
    on_node = [replica(0, phase=RUNNING, node="n1")]
    assert reconcile_drain(draining(DRAIN_TIMED_OUT), on_node, {}, DEADLINE + timedelta(hours=1)) == []


def test_a_node_that_is_not_draining_is_left_alone() -> None:
    assert reconcile_drain(node("n1"), [replica(0, phase=RUNNING, node="n1")], {}, NOW) == []


def test_a_replacement_the_scheduler_could_not_place_is_named_in_the_nodes_condition_once() -> None:
    x = replica(0, phase=RUNNING, node="n1")
    unplaceable = dataclasses.replace(replacement_of(x), phase_reason="Unschedulable")
    [change] = reconcile_drain(draining(), [x], {x.name: unplaceable}, NOW)
    assert isinstance(change, NoteDrainBlocked)
    assert change.blocked == ("shop-api-0",)
    assert "node n1" in change.message and "shop-api-0 (Unschedulable" in change.message
    noted = dataclasses.replace(
        draining(), drain=dataclasses.replace(draining().drain, message=change.message)
    )
    assert reconcile_drain(noted, [x], {x.name: unplaceable}, NOW) == []


def test_a_replacement_not_yet_tried_by_the_scheduler_is_not_called_blocked() -> None:
    x = replica(0, phase=RUNNING, node="n1")
    assert reconcile_drain(draining(), [x], {x.name: replacement_of(x)}, NOW) == []
