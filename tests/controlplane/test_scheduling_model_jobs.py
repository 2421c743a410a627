"""The scheduler's jobs take their own fields from the owner's current spec
(``manifests.model.job_spec``), and their tasks from the replicas that hold or want resources."""

from __future__ import annotations

from datetime import UTC, datetime

from loadmaster.core.model import Cluster, TaskStatus
from loadmaster.manifests import Manifest, job_replica, parse_manifests, service_replica
from loadmaster.runtime.plane.object_cache import Cached, ObjectCache
from loadmaster.runtime.scheduling.model.scheduling_model import SchedulingModel
from loadmaster.store.memory import MemoryStore

NOW = datetime(2026, 11, 21, 10, 0, 0, tzinfo=UTC)

OBJECTS = """\
api_version: loadmaster/v1
kind: Node
metadata: {name: n1}
spec: {capacity: {cpu: 8, memory: 16Gi}}
---
api_version: loadmaster/v1
kind: Queue
metadata: {name: web}
spec: {}
---
api_version: loadmaster/v1
kind: Deployment
metadata: {name: shop}
spec:
  services:
    - {name: api, image: "api:1", replicas: 3, placement: hosts, hosts: [n1, n2, n3], priority: 120,
       queue: web}
---
api_version: loadmaster/v1
kind: Job
metadata: {name: train}
spec: {tasks: 2, command: [run], priority: 90}
"""


def with_phase(replica: Manifest, phase: str, node: str | None = None) -> Manifest:
    status = {"phase": phase, **({"node_ref": node} if node else {})}
    return Manifest(replica.kind, replica.name, replica.metadata, replica.spec, status)


def cluster_of(*objects: Manifest) -> Cluster:
    """What the scheduling model builds over a cache holding ``objects`` (revisions in this order)."""
    cache = ObjectCache(MemoryStore())
    for revision, obj in enumerate(objects, start=1):
        cache.objects[obj.kind][obj.name] = Cached(obj.kind, obj.name, obj.to_dict(), revision, revision)
    return SchedulingModel(cache).build(NOW).cluster


def test_a_service_job_has_the_deployments_current_ranking_and_its_unfinished_replicas() -> None:
    node, queue, shop, _ = parse_manifests(OBJECTS)
    replicas = [
        with_phase(service_replica(shop, "api", index=10), "Running", "n1"),
        service_replica(shop, "api", index=2),
        with_phase(service_replica(shop, "api", index=3), "Failed", "n1"),
    ]
    shop.spec["services"][0]["priority"] = 130  # applied after the replicas were made with 120
    (job,) = cluster_of(node, queue, shop, *replicas).jobs
    assert (job.name, job.queue, job.priority, job.preemptible) == ("shop/api", "web", 130, False)
    assert [(task.name, task.status) for task in job.tasks] == [
        ("shop-api-10", TaskStatus.RUNNING),
        ("shop-api-2", TaskStatus.PENDING),
    ]
    assert job.min_available == 2  # placement: hosts is one gang of the replicas present


def test_the_replicas_of_a_deleted_job_are_one_gang_with_the_ranking_they_carry() -> None:
    node, _, _, train = parse_manifests(OBJECTS)
    replicas = [with_phase(job_replica(train, i), "Running", "n1") for i in (1, 0)]
    (job,) = cluster_of(node, *replicas).jobs
    assert [task.name for task in job.tasks] == ["train-0", "train-1"]
    assert (job.name, job.min_available, job.priority, job.preemptible) == ("train", 2, 90, True)


PROFILED = """\
api_version: loadmaster/v1
kind: Queue
metadata: {name: lab}
spec: {profile: lablet}
---
api_version: loadmaster/v1
kind: Deployment
metadata: {name: site}
spec:
  services:
    - {name: inherits, image: "a:1", queue: lab}
    - {name: chooses, image: "a:1", queue: lab, profile: least_instances}
    - {name: plain, image: "a:1"}
"""


def test_a_job_takes_its_own_profile_else_its_queues_else_its_placement_modes() -> None:
    node = parse_manifests(OBJECTS)[0]
    queue, site = parse_manifests(PROFILED)
    replicas = [service_replica(site, service, index=0) for service in ("inherits", "chooses", "plain")]
    jobs = {job.name: job.profile for job in cluster_of(node, queue, site, *replicas).jobs}
    assert jobs == {
        "site/inherits": "lablet",
        "site/chooses": "least_instances",
        "site/plain": "service_spread",
    }
