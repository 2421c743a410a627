"""Replica identity and lifecycle: names, the never-reused counter, phases, and server-built replicas."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.manifests import (
    ReplicaCounter,
    ReplicaPhase,
    can_transition,
    global_replica_name,
    job_replica,
    job_task_name,
    manifest_from_object,
    parse_manifests,
    replica_name,
    service_replica,
    spec_hash,
)

SHOP = """\
api_version: loadmaster/v1
kind: Deployment
metadata: {name: shop}
spec:
  services:
    - {name: api, image: "shop-api:1.4", replicas: 2, resources: {cpu: 500m}, ports: [8080]}
    - {name: logs, image: "shipper:2", placement: global}
---
api_version: loadmaster/v1
kind: Job
metadata: {name: train}
spec: {tasks: 4, min_available: 2, command: [python, train.py], resources: {gpu: 1}, queue: team-a}
"""


@pytest.fixture(name="shop")
def fixture_shop() -> tuple:
    deployment, job = parse_manifests(SHOP)
    return deployment, job


def test_replica_names_follow_the_three_id_forms() -> None:
    assert replica_name("shop", "api", 3) == "shop-api-3"
    assert global_replica_name("shop", "logs", "worker-01") == "shop-logs-worker-01"
    assert job_task_name("train", 0) == "train-0"


@pytest.mark.parametrize("index", [pytest.param(-1, id="negative"), pytest.param(True, id="boolean")])
def test_a_replica_index_must_be_a_non_negative_integer(index: int) -> None:
    with pytest.raises(ValueError, match="non-negative integer"):
        replica_name("shop", "api", index)


def test_the_counter_hands_out_the_next_indices_and_remembers_them() -> None:
    taken, counter = ReplicaCounter().take(3)
    again, counter = counter.take(2)
    assert (taken, again, counter.next_index) == ((0, 1, 2), (3, 4), 5)


@settings(max_examples=50)
@given(st.lists(st.integers(0, 5), max_size=20))
def test_the_counter_never_hands_out_an_index_twice(takes: list[int]) -> None:
    counter, seen = ReplicaCounter(), []
    for count in takes:
        taken, counter = counter.take(count)
        seen.extend(taken)
    assert len(seen) == len(set(seen)) == sum(takes)


@pytest.mark.parametrize(
    ("current", "target", "allowed"),
    [
        pytest.param("Pending", "Scheduled", True, id="scheduler-binds"),
        pytest.param("Scheduled", "Running", True, id="agent-starts"),
        pytest.param("Running", "Pending", True, id="node-lost"),
        pytest.param("Running", "Succeeded", True, id="job-task-finishes"),
        pytest.param("Terminating", "Terminated", True, id="agent-removes"),
        pytest.param("Failed", "Pending", False, id="failed-is-never-rescheduled"),
        pytest.param("Terminated", "Running", False, id="terminated-is-final"),
        pytest.param("Pending", "Running", False, id="no-start-without-a-node"),
    ],
)
def test_phase_transitions_follow_the_lifecycle(current: str, target: str, allowed: bool) -> None:
    assert can_transition(current, target) is allowed


def test_a_service_replica_carries_its_identity_hash_and_resolved_spec(shop: tuple) -> None:
    deployment, _ = shop
    replica = service_replica(deployment, "api", index=5)
    assert replica.name == "shop-api-5"
    assert replica.status == {"phase": ReplicaPhase.PENDING}
    assert replica.spec["owner_kind"] == "Deployment" and replica.spec["service"] == "api"
    assert replica.spec["spec_hash"] == spec_hash(deployment.spec["services"][0])
    assert "replicas" not in replica.spec and "name" not in replica.spec
    assert replica.spec["resources"] == {"cpu": "500m"}


def test_a_global_replica_is_named_by_its_host(shop: tuple) -> None:
    deployment, _ = shop
    replica = service_replica(deployment, "logs", host="worker-01")
    assert (replica.name, replica.spec["host"]) == ("shop-logs-worker-01", "worker-01")
    assert "index" not in replica.spec


@pytest.mark.parametrize(
    ("service", "kwargs", "message"),
    [
        pytest.param("logs", {"index": 0}, "is global", id="index-for-a-global-service"),
        pytest.param("api", {"host": "n1"}, "is not global", id="host-for-a-spread-service"),
        pytest.param("api", {}, "is not global", id="neither"),
        pytest.param("nope", {"index": 0}, 'no service "nope"', id="unknown-service"),
    ],
)
def test_a_service_replica_needs_the_right_identity(
    shop: tuple, service: str, kwargs: dict, message: str
) -> None:
    deployment, _ = shop
    with pytest.raises(ValueError, match=message):
        service_replica(deployment, service, **kwargs)


def test_a_job_replica_carries_the_gang_size_and_the_task_template(shop: tuple) -> None:
    _, job = shop
    replica = job_replica(job, 3)
    assert replica.name == "train-3"
    assert (replica.spec["min_available"], replica.spec["queue"], replica.spec["index"]) == (2, "team-a", 3)
    assert "tasks" not in replica.spec


def test_a_job_replica_index_must_be_one_of_its_tasks(shop: tuple) -> None:
    _, job = shop
    with pytest.raises(ValueError, match=r"outside 0\.\.3"):
        job_replica(job, 4)


def test_built_replicas_pass_validation_as_stored_objects(shop: tuple) -> None:
    deployment, job = shop
    built = [
        service_replica(deployment, "api", index=0),
        service_replica(deployment, "logs", host="worker-01"),
        job_replica(job, 0),
    ]
    for replica in built:
        assert manifest_from_object(replica.to_dict()) == replica


def test_a_replica_name_may_be_longer_than_a_user_chosen_name() -> None:
    long_name = replica_name("d" * 63, "s" * 63, 12)
    obj = {
        "api_version": "loadmaster/v1",
        "kind": "Replica",
        "metadata": {"name": long_name},
        "spec": {"owner_kind": "Job", "owner": "j", "index": 0, "spec_hash": "0" * 64, "image": "x"},
    }
    assert manifest_from_object(obj).name == long_name


def test_a_replica_has_exactly_the_seven_phases_of_the_spec() -> None:
    assert [phase.value for phase in ReplicaPhase] == [
        "Pending",
        "Scheduled",
        "Running",
        "Failed",
        "Terminating",
        "Terminated",
        "Succeeded",
    ]
