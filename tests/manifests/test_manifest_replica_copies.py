"""Built replicas own their spec (no part shared with the owner's manifest) and carry the owner's hash."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.manifests import Manifest, job_replica, parse_manifests, service_replica, spec_hash
from loadmaster.manifests.replica_specs import job_spec_hash, service_spec_hash

SHOP = """\
api_version: loadmaster/v1
kind: Deployment
metadata: {name: shop}
spec:
  services:
    - name: api
      image: "shop-api:1.4"
      replicas: 2
      command: [serve, --port, "8080"]
      env: {MODE: prod}
      resources: {cpu: 500m, memory: 64Mi}
      ports: [8080]
    - {name: logs, image: "shipper:2", placement: global, env: {LEVEL: info}}
---
api_version: loadmaster/v1
kind: Job
metadata: {name: train}
spec:
  tasks: 3
  min_available: 2
  command: [python, train.py]
  env: {EPOCHS: "3"}
  resources: {cpu: "2", memory: 1Gi}
"""


def containers(value: Any) -> Iterator[Any]:
    """Every dict and list inside ``value``, ``value`` included."""
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from containers(item)
    elif isinstance(value, list):
        yield value
        for item in value:
            yield from containers(item)


def shared_parts(replica: Manifest, owner: Manifest) -> list[Any]:
    owned = {id(part) for part in containers(owner.spec)}
    return [part for part in containers(replica.spec) if id(part) in owned]


@pytest.fixture(name="shop")
def fixture_shop() -> tuple[Manifest, Manifest]:
    deployment, job = parse_manifests(SHOP)
    return deployment, job


def built(shop: tuple[Manifest, Manifest]) -> list[tuple[Manifest, Manifest]]:
    deployment, job = shop
    return [
        (service_replica(deployment, "api", index=0), deployment),
        (service_replica(deployment, "logs", host="worker-01"), deployment),
        (job_replica(job, 1), job),
    ]


def test_a_built_replica_shares_no_dict_or_list_with_its_owner(shop: tuple[Manifest, Manifest]) -> None:
    for replica, owner in built(shop):
        assert shared_parts(replica, owner) == [], replica.name


def test_editing_a_built_replica_leaves_the_owner_as_it_was(shop: tuple[Manifest, Manifest]) -> None:
    deployment, job = shop
    before = (parse_manifests(SHOP)[0].spec, parse_manifests(SHOP)[1].spec)
    for replica, _ in built(shop):
        replica.spec["env"]["INJECTED"] = "yes"
        if "command" in replica.spec:
            replica.spec["command"].append("--debug")
        if "resources" in replica.spec:
            replica.spec["resources"]["cpu"] = "64"
    assert (deployment.spec, job.spec) == before


finite = st.floats(allow_nan=False, allow_infinity=False)
json_leaves = st.none() | st.booleans() | st.integers() | finite | st.text(max_size=4)
nested = st.recursive(
    json_leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=60)
@given(extra=st.dictionaries(st.from_regex(r"x_[a-z]{1,6}", fullmatch=True), nested, max_size=4))
def test_any_nested_template_is_copied_to_the_last_list(extra: dict[str, Any]) -> None:
    """Whatever the task template holds, the replica holds equal values in containers of its own."""
    job = Manifest(kind="Job", name="j", metadata={"name": "j"}, spec={"tasks": 1, **extra})
    replica = job_replica(job, 0)
    assert shared_parts(replica, job) == []
    assert {key: replica.spec[key] for key in extra} == extra


def test_the_owner_hash_functions_give_what_built_replicas_carry(shop: tuple[Manifest, Manifest]) -> None:
    deployment, job = shop
    api, logs = deployment.spec["services"]
    carried = service_replica(deployment, "api", index=4).spec["spec_hash"]
    assert service_spec_hash(deployment, "api") == carried == spec_hash(api)
    assert service_spec_hash(deployment, "logs") == spec_hash(logs)
    template = {k: v for k, v in job.spec.items() if k not in ("tasks", "min_available")}
    assert job_spec_hash(job) == job_replica(job, 2).spec["spec_hash"] == spec_hash(template)


def test_a_replica_built_with_the_known_hash_equals_one_that_computed_it(
    shop: tuple[Manifest, Manifest],
) -> None:
    deployment, job = shop
    assert job_replica(job, 1, spec_hash=job_spec_hash(job)) == job_replica(job, 1)
    known = service_spec_hash(deployment, "logs")
    assert service_replica(deployment, "logs", host="n1", spec_hash=known) == service_replica(
        deployment, "logs", host="n1"
    )


def test_a_given_hash_is_the_one_the_replica_carries(shop: tuple[Manifest, Manifest]) -> None:
    _, job = shop
    assert job_replica(job, 0, spec_hash="c" * 64).spec["spec_hash"] == "c" * 64


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda d, j: job_spec_hash(d), id="job-hash-of-a-deployment"),
        pytest.param(lambda d, j: service_spec_hash(j, "api"), id="service-hash-of-a-job"),
    ],
)
def test_the_owner_hash_functions_refuse_the_wrong_kind(shop: tuple[Manifest, Manifest], call: Any) -> None:
    deployment, job = shop
    with pytest.raises(ValueError, match="not a"):
        call(deployment, job)
