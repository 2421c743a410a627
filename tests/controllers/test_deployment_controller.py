"""The deployment controller as a pure function: replicas by index and by host, scale, spec changes."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from loadmaster.controllers.changes import (
    CreateGlobalReplica,
    CreateServiceReplicas,
    DeleteReplica,
    StartReplacement,
    TerminateReplica,
)
from loadmaster.controllers.deployments.deployment import DeploymentObserved, reconcile_deployment
from loadmaster.controllers.views import (
    FAILED,
    RUNNING,
    SCHEDULED,
    TERMINATED,
    TERMINATING,
    NodeView,
    ReplicaView,
)
from tests.controllers.views_builders import NOW, OTHER_HASH, deployment, node, replica, service


def observed(
    *replicas: ReplicaView, counters: dict[str, int] | None = None, nodes: Sequence[NodeView] = ()
) -> DeploymentObserved:
    return DeploymentObserved(list(replicas), counters or {}, list(nodes))


def test_a_new_service_gets_its_replicas_numbered_from_the_counter() -> None:
    changes = reconcile_deployment("shop", deployment(service(3)), observed(counters={"api": 5}), NOW)
    assert changes == [CreateServiceReplicas("shop", "api", (5, 6, 7), 8)]


def test_an_index_above_the_counter_is_never_handed_out_again() -> None:
    changes = reconcile_deployment(
        "shop",
        deployment(service(2)),
        observed(replica(9, phase=RUNNING, node="n1"), counters={"api": 3}),
        NOW,
    )
    assert changes == [CreateServiceReplicas("shop", "api", (10,), 11)]


def test_scale_down_removes_the_highest_indices_first() -> None:
    replicas = [replica(i, phase=RUNNING, node="n1", revision=10 + i) for i in range(5)]
    changes = reconcile_deployment(
        "shop", deployment(service(2)), observed(*replicas, counters={"api": 5}), NOW
    )
    assert [c.name for c in changes] == ["shop-api-4", "shop-api-3", "shop-api-2"]
    assert all(isinstance(c, TerminateReplica) and c.reason == "ScaledDown" for c in changes)
    assert changes[0].revision == 14  # CAS on the revision the controller saw


@pytest.mark.parametrize(
    ("phase", "node", "expected"),
    [
        pytest.param(RUNNING, "n1", TerminateReplica, id="placed-replica-is-stopped-by-its-agent"),
        pytest.param("Pending", None, DeleteReplica, id="unplaced-replica-is-simply-deleted"),
        pytest.param(FAILED, "n1", TerminateReplica, id="failed-replica-on-a-node-is-cleaned-up-there"),
    ],
)
def test_a_deleted_deployment_takes_its_replicas_away(phase: str, node: str | None, expected: type) -> None:
    changes = reconcile_deployment("shop", None, observed(replica(0, phase=phase, node=node)), NOW)
    assert len(changes) == 1
    assert isinstance(changes[0], expected)


def test_replicas_already_leaving_neither_count_nor_are_removed_again() -> None:
    replicas = [replica(0, phase=TERMINATING, node="n1"), replica(1, phase=TERMINATED, node="n1")]
    assert reconcile_deployment("shop", None, observed(*replicas), NOW) == []
    changes = reconcile_deployment(
        "shop", deployment(service(1)), observed(*replicas, counters={"api": 2}), NOW
    )
    assert changes == [CreateServiceReplicas("shop", "api", (2,), 3)]


def test_a_changed_spec_replaces_the_lowest_index_first_keeping_names_and_indices() -> None:
    replicas = [replica(i, phase=RUNNING, node="n1") for i in range(2)]
    desired = deployment(service(2, spec_hash=OTHER_HASH))
    changes = reconcile_deployment("shop", desired, observed(*replicas, counters={"api": 2}), NOW)
    assert not [c for c in changes if isinstance(c, TerminateReplica | CreateServiceReplicas)]
    starts = [c for c in changes if isinstance(c, StartReplacement)]
    assert [(c.replica, c.reason, c.spec_hash) for c in starts] == [("shop-api-0", "rollout", OTHER_HASH)]


def test_a_changed_spec_of_a_one_replica_service_starts_its_replacement_at_once() -> None:
    desired = deployment(service(1, spec_hash=OTHER_HASH))
    changes = reconcile_deployment(
        "shop", desired, observed(replica(0, phase=RUNNING, node="n1"), counters={"api": 1}), NOW
    )
    assert changes == [StartReplacement("shop-api-0", 7, "rollout", OTHER_HASH)]


def test_a_failed_replica_keeps_its_slot_and_is_not_replaced() -> None:
    replicas = [replica(0, phase=FAILED, node="n1"), replica(1, phase=RUNNING, node="n2")]
    assert (
        reconcile_deployment("shop", deployment(service(2)), observed(*replicas, counters={"api": 2}), NOW)
        == []
    )


def test_a_service_removed_from_the_deployment_loses_its_replicas() -> None:
    replicas = [replica(0, service="old", phase=SCHEDULED, node="n1")]
    changes = reconcile_deployment("shop", deployment(service(0)), observed(*replicas), NOW)
    assert [(type(c), c.reason) for c in changes] == [(TerminateReplica, "ServiceRemoved")]


def test_a_global_service_runs_one_replica_per_ready_node_cordoned_or_not() -> None:
    nodes = [node("n1"), node("n2", cordoned=True), node("n3", age_s=200), node("n4", state="NotReady")]
    changes = reconcile_deployment(
        "shop", deployment(service(placement="global")), observed(nodes=nodes), NOW
    )
    assert changes == [CreateGlobalReplica("shop", "api", "n1"), CreateGlobalReplica("shop", "api", "n2")]


def test_a_global_replica_is_dropped_when_its_node_leaves_the_ready_set() -> None:
    replicas = [
        replica(None, host="n1", phase=RUNNING, node="n1"),
        replica(None, host="n2", phase=RUNNING, node="n2"),
    ]
    nodes = [node("n1"), node("n2", age_s=91)]
    changes = reconcile_deployment(
        "shop", deployment(service(placement="global")), observed(*replicas, nodes=nodes), NOW
    )
    assert [(c.name, c.reason) for c in changes] == [("shop-api-n2", "NodeNotReady")]


def test_a_global_replica_is_not_recreated_while_its_old_record_holds_the_name() -> None:
    replicas = [replica(None, host="n1", phase=TERMINATING, node="n1")]
    changes = reconcile_deployment(
        "shop", deployment(service(placement="global")), observed(*replicas, nodes=[node("n1")]), NOW
    )
    assert changes == []


def test_switching_a_service_to_global_removes_its_numbered_replicas() -> None:
    replicas = [replica(0, phase=RUNNING, node="n1")]
    changes = reconcile_deployment(
        "shop", deployment(service(placement="global")), observed(*replicas, nodes=[node("n1")]), NOW
    )
    assert [(type(c), getattr(c, "reason", None)) for c in changes] == [
        (TerminateReplica, "PlacementChanged"),
        (CreateGlobalReplica, None),
    ]
