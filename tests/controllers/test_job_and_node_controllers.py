"""The job controller, node health and replica garbage collection as pure functions."""

from __future__ import annotations

import pytest

from loadmaster.controllers.changes import CreateJobReplicas, DeleteReplica, MarkNodeNotReady, ReturnToPending
from loadmaster.controllers.job import reconcile_job
from loadmaster.controllers.nodes.node_health import is_ready, reconcile_nodes
from loadmaster.controllers.replica_gc import reconcile_replicas
from loadmaster.controllers.views import (
    FAILED,
    PENDING,
    RUNNING,
    SCHEDULED,
    SUCCEEDED,
    TERMINATED,
    TERMINATING,
)
from loadmaster.core.heartbeat import HEARTBEAT_FRESH_FOR
from tests.controllers.views_builders import NOW, OTHER_HASH, job, job_replica, node, replica


def test_a_new_job_gets_one_replica_per_task_index() -> None:
    assert reconcile_job("train", job(3), [], NOW) == [CreateJobReplicas("train", (0, 1, 2))]


def test_finished_tasks_are_never_run_again() -> None:
    replicas = [job_replica(0, phase=SUCCEEDED, node="n1"), job_replica(1, phase=FAILED, node="n1")]
    assert reconcile_job("train", job(2), replicas, NOW) == []


def test_a_task_whose_record_is_gone_is_created_again_under_the_same_name() -> None:
    assert reconcile_job("train", job(2), [job_replica(0, phase=RUNNING, node="n1")], NOW) == [
        CreateJobReplicas("train", (1,))
    ]


def test_a_changed_job_spec_recreates_only_the_replicas_still_pending() -> None:
    replicas = [
        job_replica(0, spec_hash=OTHER_HASH),
        job_replica(1, phase=RUNNING, node="n1", spec_hash=OTHER_HASH),
    ]
    assert reconcile_job("train", job(2), replicas, NOW) == [DeleteReplica("train-0", 5, "SpecChanged")]


def test_a_deleted_job_stops_its_running_tasks_and_drops_its_pending_ones() -> None:
    replicas = [job_replica(0, phase=RUNNING, node="n1"), job_replica(1)]
    changes = reconcile_job("train", None, replicas, NOW)
    assert [(type(c).__name__, c.name) for c in changes] == [
        ("TerminateReplica", "train-0"),
        ("DeleteReplica", "train-1"),
    ]


@pytest.mark.parametrize(
    ("age_s", "state", "expected_ready"),
    [
        pytest.param(89, "Ready", True, id="heartbeat-89s-ago-is-ready"),
        pytest.param(90, "Ready", False, id="heartbeat-exactly-90s-ago-has-just-gone-stale"),
        pytest.param(91, "Ready", False, id="heartbeat-91s-ago-is-not-ready"),
        pytest.param(None, None, False, id="never-heartbeated-is-not-ready"),
        pytest.param(5, "NotReady", False, id="marked-not-ready-stays-so-until-a-heartbeat-says-ready"),
        pytest.param(-30, "Ready", True, id="a-heartbeat-from-the-future-clock-skew-counts-as-fresh"),
    ],
)
def test_a_node_is_ready_only_with_a_heartbeat_at_most_90s_old(
    age_s: float | None, state: str | None, expected_ready: bool
) -> None:
    assert HEARTBEAT_FRESH_FOR.total_seconds() == 90
    assert is_ready(node("n1", age_s=age_s, state=state), NOW) is expected_ready


def test_node_health_marks_stale_nodes_not_ready_once() -> None:
    nodes = [
        node("a", age_s=10),
        node("b", age_s=120),
        node("c", age_s=None, state=None),
        node("d", age_s=500, state="NotReady"),
    ]
    changes = reconcile_nodes(nodes, NOW)
    assert [c.node for c in changes] == ["b", "c"]
    assert all(isinstance(c, MarkNodeNotReady) for c in changes)
    assert "no heartbeat for 120s" in changes[0].message


def test_garbage_collection_drops_records_no_agent_will_report_on() -> None:
    replicas = [
        replica(0, phase=TERMINATED, node="n1"),
        replica(1, phase=TERMINATING, node="gone"),
        replica(2, phase=TERMINATING, node=None),
        replica(3, phase=TERMINATING, node="n1"),  # its agent will report Terminated
        replica(4, phase=RUNNING, node="gone"),
        replica(5, phase=SCHEDULED, node="n1"),
        replica(None, host="gone", phase=RUNNING, node="gone"),  # global: the deployment controller's
        replica(6, phase=PENDING),
    ]
    changes = reconcile_replicas(replicas, {"n1"}, NOW)
    assert [(type(c), c.name) for c in changes] == [
        (DeleteReplica, "shop-api-0"),
        (DeleteReplica, "shop-api-1"),
        (DeleteReplica, "shop-api-2"),
        (ReturnToPending, "shop-api-4"),
    ]
