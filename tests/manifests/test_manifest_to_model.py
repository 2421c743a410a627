"""Stored objects -> the core model: nodes (heartbeat staleness), queues, templates and tasks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from loadmaster.core.model import GpuMatch, ImageRef, TaskStatus, Toleration
from loadmaster.manifests import (
    Manifest,
    node_from_manifest,
    parse_manifests,
    queue_from_manifest,
    service_replica,
    task_from_replica,
    worker_template_from_manifest,
)

NOW = datetime(2026, 11, 21, 10, 0, 0, tzinfo=UTC)
GiB = 2**30


def one(text: str) -> Manifest:
    return parse_manifests("api_version: loadmaster/v1\n" + text)[0]


def node(status: str = "{}", spec: str = "{capacity: {cpu: 32, memory: 128Gi, gpu: 8}}") -> Manifest:
    return one(f"kind: Node\nmetadata: {{name: n1, labels: {{zone: a}}}}\nspec: {spec}\nstatus: {status}\n")


def heartbeat(age: timedelta) -> str:
    return f'{{last_heartbeat: "{(NOW - age).isoformat()}"}}'


def test_allocatable_is_capacity_minus_system_reserved() -> None:
    manifest = node(
        spec="{capacity: {cpu: 32, memory: 128Gi, gpu: 8}, system_reserved: {cpu: 1, memory: 2Gi}}"
    )
    converted = node_from_manifest(manifest, NOW)
    assert converted.capacity == {"cpu": 32000, "memory": 128 * GiB, "gpu": 8000}
    assert converted.allocatable == {"cpu": 31000, "memory": 126 * GiB, "gpu": 8000}
    assert converted.labels == {"zone": "a"}


def test_allocatable_reported_by_the_agent_wins_over_the_computed_one() -> None:
    converted = node_from_manifest(node(status="{allocatable: {cpu: 30, memory: 100Gi}}"), NOW)
    assert converted.allocatable == {"cpu": 30000, "memory": 100 * GiB}


@pytest.mark.parametrize(
    ("status", "state"),
    [
        pytest.param(heartbeat(timedelta(seconds=10)), "Ready", id="fresh"),
        pytest.param(heartbeat(timedelta(seconds=89.999)), "Ready", id="just-under-90s-is-fresh"),
        pytest.param(heartbeat(timedelta(seconds=90)), "NotReady", id="exactly-90s-has-just-gone-stale"),
        pytest.param(heartbeat(timedelta(seconds=91)), "NotReady", id="91s-is-stale"),
        pytest.param(heartbeat(timedelta(hours=3)), "NotReady", id="hours-old"),
        pytest.param(heartbeat(-timedelta(seconds=5)), "Ready", id="slightly-in-the-future-clock-skew"),
        pytest.param("{}", "NotReady", id="never-heartbeated"),
        pytest.param("{state: Ready}", "NotReady", id="ready-claimed-without-a-heartbeat"),
        pytest.param(
            heartbeat(timedelta(seconds=10)).replace("}", ", state: NotReady}"),
            "NotReady",
            id="fresh-but-marked-not-ready",
        ),
        pytest.param('{last_heartbeat: "2026-11-21T11:59:30+02:00"}', "Ready", id="other-timezone-30s-ago"),
    ],
)
def test_a_node_is_ready_only_with_a_recent_heartbeat(status: str, state: str) -> None:
    assert node_from_manifest(node(status=status), NOW).state == state


def test_now_without_a_timezone_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        node_from_manifest(node(status=heartbeat(timedelta(0))), NOW.replace(tzinfo=None))


def test_node_fields_reach_the_model() -> None:
    manifest = node(
        spec=(
            "{unschedulable: true, capacity: {cpu: 4}, taints: [{key: dedicated, value: ml}],"
            " gpu_model: V100M32,"
            " license_tier: team, runtime: {versions: {cml: 2.7.1}, features: [iosv]},"
            " volumes: [{name: fast, labels: {type: ssd}, size: 500Gi}]}"
        ),
        status="{network: {download: 120Mbps, upload: 40Mbps}, images: [api:1.4]}",
    )
    converted = node_from_manifest(manifest, NOW)
    assert converted.unschedulable and converted.taints[0].effect == "NoSchedule"
    assert (converted.gpu_model, converted.license_tier) == ("V100M32", "team")
    assert converted.runtime is not None and converted.runtime.versions == (("cml", "2.7.1"),)
    assert converted.volumes[0].size_bytes == 500 * GiB and converted.volumes[0].labels == (("type", "ssd"),)
    assert (converted.download_bps, converted.upload_bps) == (120_000_000, 40_000_000)
    assert converted.images == frozenset({"api:1.4"})


def test_a_stored_object_dict_converts_like_its_manifest() -> None:
    manifest = node(status=heartbeat(timedelta(seconds=1)))
    assert node_from_manifest(manifest.to_dict(), NOW) == node_from_manifest(manifest, NOW)


def test_a_queue_converts_with_parsed_quotas() -> None:
    queue = queue_from_manifest(
        one(
            "kind: Queue\nmetadata: {name: team-a}\n"
            "spec: {parent: research, deserved: {gpu: 8}, limit: {gpu: 16}}"
        )
    )
    assert (queue.parent, queue.priority, queue.over_quota_weight) == ("research", 0, 1.0)
    assert (queue.deserved, queue.limit) == ({"gpu": 8000}, {"gpu": 16000})


def test_a_worker_template_is_a_node_shape_that_can_become_a_ready_node() -> None:
    template = worker_template_from_manifest(
        one(
            "kind: WorkerTemplate\nmetadata: {name: gpu-large}\n"
            "spec: {capacity: {cpu: 64, gpu: 8}, system_reserved: {cpu: 2}, labels: {tier: gpu}, cost: 3.5}"
        )
    )
    assert (template.allocatable, template.cost) == ({"cpu": 62000, "gpu": 8000}, 3.5)
    candidate = template.as_node("scale-up-1")
    assert (candidate.name, candidate.state, candidate.labels) == ("scale-up-1", "Ready", {"tier": "gpu"})


DEPLOYMENT = """\
kind: Deployment
metadata: {name: shop}
spec:
  services:
    - name: api
      image: shop-api:1.4
      image_size: 800Mi
      replicas: 2
      placement: hosts
      hosts: [n1, n2]
      resources: {cpu: 500m, memory: 512Mi}
      gpus: 0.5
      gpu_models: [V100M32]
      node_selector: {zone: a}
      tolerations: [{key: dedicated, operator: Exists}]
      ports: [8080]
      priority: 120
      queue: web
    - {name: logs, image: "shipper:2", placement: global}
    - {name: batch, command: [run], gpus: 0, priority: 10}
"""


@pytest.fixture(name="shop")
def fixture_shop() -> Manifest:
    return one(DEPLOYMENT)


def placed(replica: Manifest, phase: str, node_name: str | None = None) -> Manifest:
    status = {"phase": phase, **({"node_ref": node_name} if node_name else {})}
    return Manifest(replica.kind, replica.name, replica.metadata, replica.spec, status)


def test_a_pending_replica_becomes_a_task_with_its_service_constraints(shop: Manifest) -> None:
    task = task_from_replica(service_replica(shop, "api", index=0))
    assert (task.name, task.job, task.status, task.node) == (
        "shop-api-0",
        "shop/api",
        TaskStatus.PENDING,
        None,
    )
    assert task.request == {"cpu": 500, "memory": 512 * 2**20, "gpu": 500}
    assert task.hosts == ("n1", "n2") and task.ports == (8080,) and task.gpu_models == ("V100M32",)
    assert task.node_selector == {"zone": "a"}
    assert task.tolerations == (Toleration(key="dedicated", operator="Exists"),)
    assert task.image == ImageRef("shop-api:1.4", 800 * 2**20)


def test_a_global_replica_is_pinned_to_its_own_host(shop: Manifest) -> None:
    task = task_from_replica(service_replica(shop, "logs", host="n7"))
    assert task.hosts == ("n7",)


def test_a_spread_service_task_is_not_pinned_and_gpus_zero_requests_no_gpu(shop: Manifest) -> None:
    task = task_from_replica(service_replica(shop, "batch", index=0))
    assert task.hosts is None and "gpu" not in task.request


@pytest.mark.parametrize(
    ("phase", "status"),
    [
        pytest.param("Scheduled", TaskStatus.RUNNING, id="scheduled-holds-its-node"),
        pytest.param("Running", TaskStatus.RUNNING, id="running"),
        pytest.param("Terminating", TaskStatus.RELEASING, id="terminating-is-releasing"),
    ],
)
def test_a_placed_replica_becomes_a_task_on_its_node(shop: Manifest, phase: str, status: TaskStatus) -> None:
    task = task_from_replica(placed(service_replica(shop, "api", index=0), phase, "n1"))
    assert (task.status, task.node) == (status, "n1")


@pytest.mark.parametrize("phase", ["Failed", "Succeeded", "Terminated"])
def test_a_finished_replica_is_not_a_task(shop: Manifest, phase: str) -> None:
    with pytest.raises(ValueError, match="holds no resources"):
        task_from_replica(placed(service_replica(shop, "api", index=0), phase, "n1"))


def test_a_pending_replica_remembers_where_it_ran_before(shop: Manifest) -> None:
    replica = service_replica(shop, "api", index=0)
    returned = Manifest(
        replica.kind, replica.name, replica.metadata, replica.spec, {"previous_node_ref": "n2"}
    )
    assert task_from_replica(returned).previous_node == "n2"


def test_a_node_overcommit_and_a_service_opt_in_reach_the_model() -> None:
    converted = node_from_manifest(node(spec="{capacity: {cpu: 4}, overcommit: {cpu: 1.5, memory: 1}}"), NOW)
    assert converted.overcommit == {"cpu": 1.5, "memory": 1.0}
    assert node_from_manifest(node(), NOW).overcommit == {}
    shop = one(
        "kind: Deployment\nmetadata: {name: shop}\nspec:\n  services:\n"
        "    - {name: batch, command: [run], overcommit: true}\n    - {name: web, command: [serve]}\n"
    )
    assert task_from_replica(service_replica(shop, "batch", index=0)).overcommit
    assert not task_from_replica(service_replica(shop, "web", index=0)).overcommit


def test_compose_gpu_requests_and_a_nodes_gpu_driver_reach_the_model() -> None:
    converted = node_from_manifest(
        node(spec="{capacity: {gpu: 4}, gpu_driver: nvidia, gpu_capabilities: [compute]}"), NOW
    )
    assert (converted.gpu_driver, converted.gpu_capabilities) == ("nvidia", ("compute",))
    shop = one(
        "kind: Deployment\nmetadata: {name: shop}\nspec:\n  services:\n"
        "    - {name: pair, command: [run],"
        " gpus: [{driver: nvidia, count: 2, capabilities: [gpu, compute]}]}\n"
        "    - {name: whole, command: [run], gpus: all}\n"
    )
    pair = task_from_replica(service_replica(shop, "pair", index=0))
    assert pair.request == {"gpu": 2000} and not pair.gpu_all
    assert pair.gpu_match == GpuMatch("nvidia", ("gpu", "compute"))
    whole = service_replica(shop, "whole", index=0)
    pending = task_from_replica(whole)
    assert pending.gpu_all and "gpu" not in pending.request and pending.gpu_match is None
    bound = Manifest(whole.kind, whole.name, whole.metadata, whole.spec,
                     {"phase": "Running", "node_ref": "n1", "devices": [0, 1, 2]})  # fmt: skip
    assert task_from_replica(bound).request == {"gpu": 3000}  # the devices it holds
