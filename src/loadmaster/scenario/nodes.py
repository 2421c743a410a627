"""One entry of ``nodes``: capacity, allocatable, state, taints and the seeds' further node fields.

Choices where the spec is silent: a resource named in ``capacity`` but not in a given ``allocatable``
keeps its capacity as allocatable (``allocatable: {cpu: 7}`` reserves cpu only); a node's ``gpu``
capacity and allocatable must both be whole devices; ``network`` may give ``download``, ``upload`` or
both (bits per second; an absent one is unknown).
"""

from __future__ import annotations

from typing import Any, cast

from loadmaster.core.model import NODE_STATES, Node, NodeState
from loadmaster.core.resources import GPU, format_quantity
from loadmaster.fields.gpus import is_whole_devices
from loadmaster.fields.overcommit import overcommit_factor_problem, overcommit_resource_problem
from loadmaster.scenario.errors import ScenarioError, did_you_mean
from loadmaster.scenario.fields import (
    as_bits_per_second,
    as_bool,
    as_choice,
    as_labels,
    as_mapping,
    as_name,
    as_str_list,
    as_tuple,
    as_uniquely_named,
    check_keys,
    require,
)
from loadmaster.scenario.quantities import as_resources
from loadmaster.scenario.runtimes import as_node_runtime
from loadmaster.scenario.taints import as_taint
from loadmaster.scenario.volumes import as_volume_pools

_NODE_FIELDS = frozenset(
    {
        "name",
        "labels",
        "capacity",
        "allocatable",
        "state",
        "unschedulable",
        "taints",
        "gpu_model",
        "gpu_driver",
        "gpu_capabilities",
        "license_tier",
        "runtime",
        "volumes",
        "network",
        "images",
        "overcommit",
    }
)
_NETWORK_FIELDS = frozenset({"download", "upload"})


def check_whole_gpus(resources: dict[str, int], path: str, what: str) -> None:
    """A node's GPUs are devices of 1.0 each: its gpu amount must be a whole number."""
    gpus = resources.get(GPU, 0)
    if not is_whole_devices(gpus):
        raise ScenarioError(
            f"{path}.{GPU}", f"{what} must be a whole number of gpu devices, got {format_quantity(GPU, gpus)}"
        )


def check_license_tier(value: object, path: str, license_tiers: tuple[str, ...]) -> str:
    tier = as_name(value, path)
    if tier not in license_tiers:
        raise ScenarioError(
            path,
            f'unknown license tier "{tier}" (config.license_tiers: {", ".join(license_tiers)})'
            + did_you_mean(tier, license_tiers),
        )
    return tier


def _allocatable(value: object, path: str, capacity: dict[str, int]) -> dict[str, int]:
    given = as_resources(value, path)
    for resource, amount in given.items():
        if amount > capacity.get(resource, 0):
            raise ScenarioError(
                f"{path}.{resource}",
                f"allocatable {format_quantity(resource, amount)} exceeds capacity "
                f"{format_quantity(resource, capacity.get(resource, 0))}",
            )
    return {**capacity, **given}


def _network(value: object, path: str) -> tuple[int | None, int | None]:
    mapping = as_mapping(value, path)
    check_keys(mapping, _NETWORK_FIELDS, path)
    download, upload = mapping.get("download"), mapping.get("upload")
    return (
        None if download is None else as_bits_per_second(download, f"{path}.download"),
        None if upload is None else as_bits_per_second(upload, f"{path}.upload"),
    )


def as_overcommit(value: object, path: str) -> dict[str, float]:
    """``overcommit: {cpu: 1.5, memory: 1.0}``: a factor >= 1 per resource (``fields/overcommit.py``)."""
    factors: dict[str, float] = {}
    for resource, factor in as_mapping(value, path).items():
        problem = overcommit_resource_problem(resource)
        if problem is not None:
            raise ScenarioError(path, problem)
        problem = overcommit_factor_problem(factor)
        if problem is not None:
            raise ScenarioError(f"{path}.{resource}", problem)
        factors[resource] = float(factor)
    return factors


def as_node(value: object, path: str, license_tiers: tuple[str, ...]) -> Node:
    mapping: dict[Any, Any] = as_mapping(value, path)
    check_keys(mapping, _NODE_FIELDS, path)
    name = as_name(require(mapping, "name", path), f"{path}.name")
    raw = mapping.get("capacity")
    capacity = {} if raw is None else as_resources(raw, f"{path}.capacity")
    check_whole_gpus(capacity, f"{path}.capacity", "gpu capacity")
    raw = mapping.get("allocatable")
    if raw is None:
        allocatable = dict(capacity)
    else:
        allocatable = _allocatable(raw, f"{path}.allocatable", capacity)
        check_whole_gpus(allocatable, f"{path}.allocatable", "allocatable gpu")
    download_bps = upload_bps = None
    if (network := mapping.get("network")) is not None:
        download_bps, upload_bps = _network(network, f"{path}.network")
    state, unschedulable, taints = mapping.get("state"), mapping.get("unschedulable"), mapping.get("taints")
    labels, gpu_model, tier = mapping.get("labels"), mapping.get("gpu_model"), mapping.get("license_tier")
    runtime, volumes, images = mapping.get("runtime"), mapping.get("volumes"), mapping.get("images")
    return Node(
        name=name,
        capacity=capacity,
        allocatable=allocatable,
        labels={} if labels is None else as_labels(labels, f"{path}.labels"),
        state="Ready" if state is None else cast(NodeState, as_choice(state, f"{path}.state", NODE_STATES)),
        unschedulable=False if unschedulable is None else as_bool(unschedulable, f"{path}.unschedulable"),
        taints=() if taints is None else as_tuple(taints, f"{path}.taints", as_taint),
        gpu_model=None if gpu_model is None else as_name(gpu_model, f"{path}.gpu_model"),
        gpu_driver=None if (raw := mapping.get("gpu_driver")) is None else as_name(raw, f"{path}.gpu_driver"),
        gpu_capabilities=()
        if (raw := mapping.get("gpu_capabilities")) is None
        else as_str_list(raw, f"{path}.gpu_capabilities"),
        license_tier=None
        if tier is None
        else check_license_tier(tier, f"{path}.license_tier", license_tiers),
        runtime=None if runtime is None else as_node_runtime(runtime, f"{path}.runtime"),
        volumes=() if volumes is None else as_volume_pools(volumes, f"{path}.volumes"),
        download_bps=download_bps,
        upload_bps=upload_bps,
        images=frozenset() if images is None else frozenset(as_str_list(images, f"{path}.images")),
        overcommit={}
        if (raw := mapping.get("overcommit")) is None
        else as_overcommit(raw, f"{path}.overcommit"),
    )


def as_nodes(value: object, path: str, license_tiers: tuple[str, ...]) -> tuple[Node, ...]:
    """The ``nodes`` list; node names are unique."""
    return as_uniquely_named(value, path, lambda item, at: as_node(item, at, license_tiers), "node")
