"""spec_hash: formatting, comments and key order never change it; any value that reaches a replica does."""

from __future__ import annotations

import hashlib
import random
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.manifests import parse_manifests, spec_hash

BLOCK = """\
api_version: loadmaster/v1
kind: Deployment
metadata:
  name: shop
spec:
  services:
    - name: api                     # the public API
      image: registry.example/shop-api:1.4
      replicas: 3
      resources:
        cpu: 500m
        memory: 512Mi
      env:
        MODE: prod
"""

FLOW = """\
# same service, flow style, other key order
{kind: Deployment, api_version: loadmaster/v1, metadata: {name: shop},
 spec: {services: [{env: {MODE: prod}, resources: {memory: 512Mi, cpu: 500m},
                    replicas: 3, image: "registry.example/shop-api:1.4", name: api}]}}
"""


def service_hash(text: str) -> str:
    return spec_hash(parse_manifests(text)[0].spec["services"][0])


def test_the_hash_is_sha256_of_the_canonical_json_without_the_replica_count() -> None:
    spec = {"name": "api", "image": "a:1", "replicas": 3, "ports": [80]}
    canonical = '{"image":"a:1","name":"api","ports":[80]}'
    assert spec_hash(spec) == hashlib.sha256(canonical.encode()).hexdigest()


def test_reformatting_the_yaml_and_adding_comments_keeps_the_hash() -> None:
    assert service_hash(BLOCK) == service_hash(FLOW)


def test_changing_an_env_value_changes_the_hash() -> None:
    assert service_hash(BLOCK) != service_hash(BLOCK.replace("MODE: prod", "MODE: dev"))


def test_changing_the_image_changes_the_hash() -> None:
    assert service_hash(BLOCK) != service_hash(BLOCK.replace("shop-api:1.4", "shop-api:1.5"))


def test_scaling_alone_keeps_the_hash_so_running_replicas_are_not_recreated() -> None:
    assert service_hash(BLOCK) == service_hash(BLOCK.replace("replicas: 3", "replicas: 7"))


def test_a_node_loss_policy_change_keeps_the_hash_so_running_replicas_are_not_recreated() -> None:
    with_policy = BLOCK.replace("      replicas: 3\n", "      replicas: 3\n      node_loss_policy: all\n")
    assert service_hash(BLOCK) == service_hash(with_policy)


def test_writing_a_default_explicitly_keeps_the_hash() -> None:
    explicit = BLOCK.replace(
        "      replicas: 3\n", "      replicas: 3\n      placement: spread\n      queue: default\n"
    )
    assert service_hash(BLOCK) == service_hash(explicit)


# --- properties -------------------------------------------------------------------------------------

names = st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True)
json_scalars = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
    max_leaves=10,
)
specs = st.dictionaries(names.filter(lambda key: key != "replicas"), json_values, min_size=1, max_size=6)


def shuffled(value: Any, rng: random.Random) -> Any:
    """The same data with every mapping's keys in another order."""
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {key: shuffled(value[key], rng) for key in keys}
    if isinstance(value, list):
        return [shuffled(item, rng) for item in value]
    return value


@settings(max_examples=60)
@given(spec=specs, seed=st.integers(0, 2**16))
def test_key_order_never_changes_the_hash(spec: dict[str, Any], seed: int) -> None:
    assert spec_hash(shuffled(spec, random.Random(seed))) == spec_hash(spec)


@settings(max_examples=60)
@given(spec=specs, data=st.data())
def test_changing_any_value_changes_the_hash(spec: dict[str, Any], data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(sorted(spec)))
    other = data.draw(
        json_values.filter(lambda value: value != spec[key] or type(value) is not type(spec[key]))
    )
    assert spec_hash({**spec, key: other}) != spec_hash(spec)


services = st.fixed_dictionaries(
    {"name": names, "image": names.map(lambda n: f"registry.example/{n}:1")},
    optional={
        "replicas": st.integers(0, 20),
        "ports": st.lists(st.integers(1, 65535), unique=True, max_size=3),
        "env": st.dictionaries(names.map(str.upper), names, max_size=3),
        "resources": st.fixed_dictionaries({"cpu": st.sampled_from(["500m", 1, 0.25, "2"])}),
        "command": st.lists(names, min_size=1, max_size=3),
    },
)


@settings(max_examples=40)
@given(service=services, seed=st.integers(0, 2**16), flow=st.booleans())
def test_any_service_keeps_its_hash_through_any_yaml_formatting(
    service: dict[str, Any], seed: int, flow: bool
) -> None:
    obj = {"api_version": "loadmaster/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {}}
    obj["spec"] = {"services": [service]}
    plain = yaml.safe_dump(obj, sort_keys=False)
    reformatted = "# reformatted\n" + yaml.safe_dump(
        shuffled(obj, random.Random(seed)), default_flow_style=flow, width=60, indent=4
    )
    assert service_hash(plain) == service_hash(reformatted)
