"""A job's own fields: the spec they come from (the owner's current one) and the defaults they take."""

from __future__ import annotations

from typing import Any

import pytest

from loadmaster.core.model import Task
from loadmaster.manifests import Manifest, job_replica, parse_manifests, service_replica
from loadmaster.manifests.model.job_spec import find_service, job_from_level, job_level, service_level

SHOP = """\
api_version: loadmaster/v1
kind: Deployment
metadata: {name: shop}
spec:
  services:
    - {name: api, image: "api:1", replicas: 3, placement: hosts, hosts: [n1, n2, n3], priority: 120,
       queue: web}
    - {name: logs, image: "shipper:2", placement: global}
    - {name: batch, command: [run], placement: pack, priority: 10}
    - {name: web, image: "web:1", preemptible: true, priority: 150}
"""

TRAIN = """\
api_version: loadmaster/v1
kind: Job
metadata: {name: train}
spec: {tasks: 3, command: [run], resources: {gpu: 1}, priority: 90}
"""


def manifest(text: str) -> Manifest:
    return parse_manifests(text)[0]


def tasks(count: int) -> list[Task]:
    return [Task(f"t{i}", "job", {}) for i in range(count)]


def test_a_service_job_takes_its_fields_from_the_deployments_current_spec_not_its_replicas() -> None:
    shop = manifest(SHOP)
    replica = service_replica(shop, "api", index=0)
    shop.spec["services"][0]["priority"] = 130  # a later apply: the replica still carries 120
    level, position = job_level(replica.spec, shop.spec)
    assert (level["priority"], level["queue"], level["owner_kind"], position) == (130, "web", "Deployment", 0)


def test_the_jobs_of_a_deployment_come_in_service_order() -> None:
    shop = manifest(SHOP)
    positions = [job_level(service_replica(shop, "batch", index=0).spec, shop.spec)[1]]
    positions.append(job_level(service_replica(shop, "logs", host="n1").spec, shop.spec)[1])
    assert positions == [2, 1]


def test_a_service_no_longer_listed_keeps_its_replicas_fields_and_comes_after_the_listed_ones() -> None:
    shop = manifest(SHOP)
    replica = service_replica(shop, "batch", index=0)
    shop.spec["services"].pop(2)
    level, position = job_level(replica.spec, shop.spec)
    assert level == replica.spec and position == 3


def test_a_job_takes_its_fields_from_the_job_spec() -> None:
    train = manifest(TRAIN)
    level, position = job_level(job_replica(train, 0).spec, train.spec)
    assert (level["priority"], level["min_available"], level["owner_kind"], position) == (90, 3, "Job", 0)


def test_a_batch_job_without_its_owner_is_rebuilt_from_its_replicas_alone_as_a_gang() -> None:
    replica = job_replica(manifest(TRAIN), 2)
    level, _ = job_level(replica.spec, None)
    job = job_from_level("train", level, tasks(3))
    assert (job.min_available, job.priority, job.preemptible, job.queue) == (3, 90, True, "default")


@pytest.mark.parametrize(
    ("service", "task_count", "min_available", "profile"),
    [
        pytest.param("api", 3, 3, None, id="hosts-is-one-gang-of-all-replicas"),
        pytest.param("api", 2, 2, None, id="hosts-gang-is-at-most-its-replicas-present"),
        pytest.param("logs", 4, 1, None, id="global-places-replica-by-replica"),
        pytest.param("batch", 4, 1, "service_pack", id="pack-is-fewest-replicas-first"),
        pytest.param("web", 4, 1, "service_spread", id="spread-is-even-rendezvous-hashing"),
    ],
)
def test_a_services_gang_size_and_profile_follow_its_placement_mode(
    service: str, task_count: int, min_available: int, profile: str | None
) -> None:
    shop = manifest(SHOP)
    level = service_level(find_service(shop, service))
    job = job_from_level(f"shop/{service}", level, tasks(task_count))
    assert (job.min_available, job.profile, len(job.tasks)) == (min_available, profile, task_count)


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        pytest.param({}, ("default", 50, True), id="defaults-priority-50-is-preemptible"),
        pytest.param({"priority": 99}, ("default", 99, True), id="below-100-is-preemptible"),
        pytest.param({"priority": 100}, ("default", 100, False), id="100-and-above-is-not"),
        pytest.param({"priority": 150, "preemptible": True}, ("default", 150, True), id="explicit-wins"),
        pytest.param({"queue": "web", "priority": 10, "preemptible": False}, ("web", 10, False), id="given"),
    ],
)
def test_ranking_fields_default_the_way_the_scenario_format_does(
    level: dict[str, Any], expected: tuple[str, int, bool]
) -> None:
    job = job_from_level("j", {**level, "owner_kind": "Job"}, tasks(1))
    assert (job.queue, job.priority, job.preemptible) == expected


@pytest.mark.parametrize(
    ("min_available", "task_count", "expected"),
    [
        pytest.param(None, 4, 4, id="default-is-every-task"),
        pytest.param(2, 4, 2, id="given"),
        pytest.param(3, 2, 2, id="at-most-the-tasks-present"),
    ],
)
def test_a_jobs_gang_size_is_its_min_available_within_its_tasks(
    min_available: int | None, task_count: int, expected: int
) -> None:
    level: dict[str, Any] = {"owner_kind": "Job"}
    if min_available is not None:
        level["min_available"] = min_available
    assert job_from_level("j", level, tasks(task_count)).min_available == expected


def test_an_unknown_service_is_refused() -> None:
    with pytest.raises(ValueError, match='deployments/shop: no service "db"'):
        find_service(manifest(SHOP), "db")
