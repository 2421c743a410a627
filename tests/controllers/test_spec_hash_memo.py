"""A job's spec hash is computed once per stored revision: the view and the replicas it asks for share it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from loadmaster.manifests import JOB, REPLICA, Manifest, parse_manifests, replica_specs, spec_hash
from loadmaster.manifests.replica_specs import job_spec_hash, service_spec_hash
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.object_cache import Cached
from loadmaster.runtime.reconciling import controller_views
from loadmaster.runtime.reconciling.controller_views import SpecHashes
from loadmaster.runtime.requests.writes.object_writes import apply_manifests
from tests.controllers.conftest import catch_up

pytestmark = pytest.mark.anyio


def job_text(name: str = "train", tasks: int = 3, image: str = "trainer:1") -> str:
    return f"""
api_version: loadmaster/v1
kind: Job
metadata: {{name: {name}}}
spec: {{tasks: {tasks}, image: "{image}", command: [python, train.py], resources: {{cpu: 100m}}}}
"""


SHOP = """
api_version: loadmaster/v1
kind: Deployment
metadata: {name: shop}
spec:
  services:
    - {name: api, image: "api:1", replicas: 2}
    - {name: web, image: "web:1", replicas: 1}
"""


def cached(text: str, revision: int) -> Cached:
    manifest = parse_manifests(text)[0]
    return Cached(manifest.kind, manifest.name, manifest.to_dict(), revision, revision)


@pytest.fixture(name="calls")
def fixture_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the owners whose hash was really computed (not taken from the memo)."""
    calls: list[str] = []

    def counting(compute: Callable[..., str]) -> Callable[..., str]:
        def wrapper(owner: Manifest, *args: Any) -> str:
            calls.append(owner.name)
            return compute(owner, *args)

        return wrapper

    monkeypatch.setattr(controller_views, "job_spec_hash", counting(job_spec_hash))
    monkeypatch.setattr(controller_views, "service_spec_hash", counting(service_spec_hash))
    return calls


def test_asking_twice_for_one_revision_computes_the_hash_once(calls: list[str]) -> None:
    hashes, job = SpecHashes(), cached(job_text(), revision=4)
    first, second = hashes.job(job), hashes.job(job)
    assert first == second == job_spec_hash(Manifest.from_stored(job.obj))
    assert calls == ["train"]


def test_a_new_revision_gets_the_hash_of_its_own_spec(calls: list[str]) -> None:
    hashes = SpecHashes()
    old, new = cached(job_text(image="trainer:1"), 4), cached(job_text(image="trainer:2"), 9)
    assert hashes.job(old) != hashes.job(new) == job_spec_hash(Manifest.from_stored(new.obj))
    assert calls == ["train", "train"]


def test_equal_names_in_two_stores_never_share_a_hash() -> None:
    """Revision 4 of "train" in one store says nothing of revision 4 of "train" in another."""
    hashes = SpecHashes()
    here, there = cached(job_text(image="trainer:1"), 4), cached(job_text(image="trainer:2"), 4)
    assert hashes.job(here) != hashes.job(there)


def test_each_service_of_a_deployment_has_its_own_hash(calls: list[str]) -> None:
    hashes, shop = SpecHashes(), cached(SHOP, 3)
    deployment = Manifest.from_stored(shop.obj)
    assert (hashes.service(shop, "api"), hashes.service(shop, "web"), hashes.service(shop, "api")) == (
        service_spec_hash(deployment, "api"),
        service_spec_hash(deployment, "web"),
        service_spec_hash(deployment, "api"),
    )
    assert calls == ["shop", "shop"]


def test_the_memo_keeps_at_most_its_capacity_dropping_the_oldest_first(calls: list[str]) -> None:
    hashes = SpecHashes(capacity=2)
    jobs = [cached(job_text(name=f"j{i}"), i + 1) for i in range(3)]
    for job in jobs:
        hashes.job(job)
    assert len(hashes) == 2
    hashes.job(jobs[2])  # still remembered
    hashes.job(jobs[0])  # dropped: computed again
    assert calls == ["j0", "j1", "j2", "j0"]


@pytest.fixture(name="hashed")
def fixture_hashed(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every spec the replica builders hashed, whoever asked (views, writes, the builders themselves)."""
    hashed: list[dict[str, Any]] = []

    def counting(spec: dict[str, Any]) -> str:
        hashed.append(spec)
        return spec_hash(spec)

    monkeypatch.setattr(replica_specs, "hash_of", counting)
    return hashed


async def test_a_pass_that_creates_a_jobs_replicas_hashes_its_spec_once(
    plane: ControlPlane, hashed: list[dict[str, Any]]
) -> None:
    assert plane.controllers is not None
    await apply_manifests(plane, parse_manifests(job_text(tasks=3)), "user")
    await catch_up(plane)
    await plane.controllers.reconcile_once()
    await catch_up(plane)
    assert sorted(plane.cache.objects[REPLICA]) == ["train-0", "train-1", "train-2"]
    assert [spec["image"] for spec in hashed] == ["trainer:1"]
    job = Manifest.from_stored(plane.cache.objects[JOB]["train"].obj)
    carried = {c.obj["spec"]["spec_hash"] for c in plane.cache.objects[REPLICA].values()}
    assert carried == {job_spec_hash(job)}


async def test_a_pass_that_creates_a_deployments_replicas_hashes_each_service_once(
    plane: ControlPlane, hashed: list[dict[str, Any]]
) -> None:
    assert plane.controllers is not None
    await apply_manifests(plane, parse_manifests(SHOP), "user")
    await catch_up(plane)
    await plane.controllers.reconcile_once()
    await catch_up(plane)
    assert sorted(plane.cache.objects[REPLICA]) == ["shop-api-0", "shop-api-1", "shop-web-0"]
    assert sorted(spec["image"] for spec in hashed) == ["api:1", "web:1"]
