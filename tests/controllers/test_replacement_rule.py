"""The replacement rule (controllers/replacement.py): complete a replacement that runs, give up a late one
or one whose replica is going away; and the owners' controllers count a replica and its replacement as
one slot."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

import pytest

from loadmaster.controllers.changes import (
    AbortReplacement,
    CompleteReplacement,
    CreateServiceReplicas,
)
from loadmaster.controllers.deployments.deployment import DeploymentObserved, reconcile_deployment
from loadmaster.controllers.job import reconcile_job
from loadmaster.controllers.replacement import reconcile_replacements
from loadmaster.controllers.views import PENDING, RUNNING, SCHEDULED, TERMINATING, ReplicaView
from tests.controllers.views_builders import NOW, deployment, job, job_replica, replica, service

DEADLINE = NOW + timedelta(minutes=5)


def old(phase: str = RUNNING, node: str = "n1") -> ReplicaView:
    return replica(0, phase=phase, node=node, revision=10)


def replacement_of(
    x: ReplicaView,
    phase: str = PENDING,
    node: str | None = None,
    reason: str = "drain",
    due: datetime | None = DEADLINE,
    healthy: bool = True,
) -> ReplicaView:
    # Positional: X's identity, then the replacement's own phase, node, revision, incarnation, the
    # replica it replaces, why, by when, and its health.
    return ReplicaView(
        f"{x.name}.next", x.owner_kind, x.owner, x.service, x.index, x.host, x.spec_hash,
        phase, node, 20, f"{x.name}.next@19", x.name, reason, due, healthy,
    )  # fmt: skip


def test_a_replacement_running_and_healthy_completes_with_both_revisions_and_both_nodes() -> None:
    x = old()
    changes = reconcile_replacements([replacement_of(x, RUNNING, "n2")], {x.name: x}, NOW)
    assert changes == [CompleteReplacement(x.name, 10, 20, "drain", "n1", "n2")]


@pytest.mark.parametrize(
    ("phase", "healthy"),
    [
        pytest.param(PENDING, True, id="still-pending"),
        pytest.param(SCHEDULED, True, id="bound-not-started"),
        pytest.param(RUNNING, False, id="running-but-degraded"),
    ],
)
def test_a_replacement_not_yet_running_and_healthy_before_its_deadline_waits(
    phase: str, healthy: bool
) -> None:
    x = old()
    node = None if phase == PENDING else "n2"
    r = replacement_of(x, phase, node, healthy=healthy)
    assert reconcile_replacements([r], {x.name: x}, DEADLINE - timedelta(milliseconds=1)) == []


@pytest.mark.parametrize(
    ("reason", "abort_reason"),
    [
        pytest.param("drain", "drain_timeout", id="drain"),
        pytest.param("rollout", "step_timeout", id="rollout"),
        pytest.param("rebalance", "deadline", id="rebalance"),
    ],
)
def test_a_replacement_not_running_at_its_deadline_is_given_up_and_says_why(
    reason: str, abort_reason: str
) -> None:
    x = old()
    [change] = reconcile_replacements([replacement_of(x, reason=reason)], {x.name: x}, DEADLINE)
    assert isinstance(change, AbortReplacement)
    assert (change.replica, change.replacement_revision, change.reason) == (x.name, 20, abort_reason)
    assert "keeps running" in change.message and "Pending, never placed" in change.message


def test_a_replacement_running_at_its_deadline_completes_rather_than_aborts() -> None:
    x = old()
    [change] = reconcile_replacements([replacement_of(x, RUNNING, "n2")], {x.name: x}, DEADLINE)
    assert isinstance(change, CompleteReplacement)


def test_a_replacement_without_a_deadline_waits_for_ever() -> None:
    x = old()
    r = replacement_of(x, due=None)
    assert reconcile_replacements([r], {x.name: x}, NOW + timedelta(days=30)) == []


@pytest.mark.parametrize(
    "present", [pytest.param(False, id="replica-gone"), pytest.param(True, id="replica-terminating")]
)
def test_a_replacement_whose_replica_is_gone_or_leaving_is_removed(present: bool) -> None:
    x = old(TERMINATING)
    r = replacement_of(x, RUNNING, "n2")
    [change] = reconcile_replacements([r], {x.name: x} if present else {}, NOW)
    assert isinstance(change, AbortReplacement)
    assert (change.replica, change.reason) == (x.name, "replaced_gone")


def test_a_leaving_replacement_is_left_to_garbage_collection() -> None:
    x = old()
    assert reconcile_replacements([replacement_of(x, TERMINATING, "n2")], {x.name: x}, DEADLINE) == []


def test_the_rule_is_idempotent_on_the_same_input() -> None:
    x = old()
    replacements = [replacement_of(x, RUNNING, "n2")]
    first = reconcile_replacements(replacements, {x.name: x}, NOW)
    assert first == reconcile_replacements(replacements, {x.name: x}, NOW)


def test_a_service_counts_a_replica_and_its_replacement_as_one_slot() -> None:
    replicas = [replica(i, phase=RUNNING, node="n1") for i in range(3)]
    replicas.append(replacement_of(replicas[1], SCHEDULED, "n2"))
    observed = DeploymentObserved(replicas, {"api": 3}, [])
    assert reconcile_deployment("shop", deployment(service(replicas=3)), observed, NOW) == []


def test_a_scale_down_removes_the_replica_not_its_replacement() -> None:
    replicas = [replica(i, phase=RUNNING, node="n1") for i in range(3)]
    replicas.append(replacement_of(replicas[2], SCHEDULED, "n2"))
    observed = DeploymentObserved(replicas, {"api": 3}, [])
    changes = reconcile_deployment("shop", deployment(service(replicas=2)), observed, NOW)
    assert [getattr(c, "name", None) for c in changes] == ["shop-api-2"]


def test_a_replica_gone_while_its_replacement_waits_leaves_its_slot_to_a_new_index() -> None:
    replicas = [replica(0, phase=RUNNING, node="n1")]
    replicas.append(dataclasses.replace(replacement_of(replica(1), PENDING), replaces="shop-api-1"))
    observed = DeploymentObserved(replicas, {"api": 2}, [])
    changes = reconcile_deployment("shop", deployment(service(replicas=2)), observed, NOW)
    assert changes == [CreateServiceReplicas("shop", "api", (2,), 3)]


def test_a_job_counts_a_task_and_its_replacement_as_one_task() -> None:
    tasks = [job_replica(i, phase=RUNNING, node="n1") for i in range(2)]
    tasks.append(replacement_of(tasks[0], PENDING))
    assert reconcile_job("train", job(tasks=2), tasks, NOW) == []
