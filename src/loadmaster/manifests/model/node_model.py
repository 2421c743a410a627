"""Node manifests (and node shapes) -> ``core.model.Node``, the scheduler's view of a machine."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from loadmaster.core.heartbeat import is_heartbeat_fresh
from loadmaster.core.model import DEFAULT_TAINT_EFFECT, Node, NodeRuntime, NodeState, Taint, VolumePool
from loadmaster.core.resources import MEMORY, parse_bits_per_second, parse_quantity, parse_resources
from loadmaster.manifests.manifest import Manifest
from loadmaster.manifests.timestamps import parse_timestamp


def as_manifest(obj: Manifest | Mapping[str, Any]) -> Manifest:
    """Accept a Manifest or a stored object dict (trusted: validated when it was written)."""
    return obj if isinstance(obj, Manifest) else Manifest.from_stored(obj)


def node_state(status: Mapping[str, Any], now: datetime) -> NodeState:
    """Ready needs a fresh heartbeat (``core.heartbeat``), and no explicit NotReady from the node
    controller."""
    heartbeat = status.get("last_heartbeat")
    fresh = is_heartbeat_fresh(None if heartbeat is None else parse_timestamp(heartbeat), now)
    return "Ready" if fresh and status.get("state") != "NotReady" else "NotReady"


def allocatable_of(spec: Mapping[str, Any], status: Mapping[str, Any]) -> dict[str, int]:
    """status.allocatable when the agent reported it, else capacity - system_reserved (never < 0)."""
    if "allocatable" in status:
        return parse_resources(status["allocatable"])
    capacity = parse_resources(spec.get("capacity"))
    reserved = parse_resources(spec.get("system_reserved"))
    return {resource: max(0, amount - reserved.get(resource, 0)) for resource, amount in capacity.items()}


def taints_of(spec: Mapping[str, Any]) -> tuple[Taint, ...]:
    return tuple(
        Taint(key=t["key"], value=t.get("value", ""), effect=t.get("effect", DEFAULT_TAINT_EFFECT))
        for t in spec.get("taints", [])
    )


def runtime_of(spec: Mapping[str, Any]) -> NodeRuntime | None:
    runtime = spec.get("runtime")
    if runtime is None:
        return None
    return NodeRuntime(
        versions=tuple(runtime.get("versions", {}).items()), features=tuple(runtime.get("features", []))
    )


def volume_pools_of(spec: Mapping[str, Any]) -> tuple[VolumePool, ...]:
    return tuple(
        VolumePool(
            name=pool["name"],
            size_bytes=parse_quantity(MEMORY, pool["size"]),
            labels=tuple(pool.get("labels", {}).items()),
        )
        for pool in spec.get("volumes", [])
    )


def node_from_manifest(manifest: Manifest | Mapping[str, Any], now: datetime) -> Node:
    """A Node manifest as the scheduler sees it at ``now`` (state from the heartbeat's age)."""
    node = as_manifest(manifest)
    spec, status = node.spec, node.status
    network = status.get("network", {})
    return Node(
        name=node.name,
        capacity=parse_resources(spec.get("capacity")),
        allocatable=allocatable_of(spec, status),
        labels=dict(node.labels),
        state=node_state(status, now),
        unschedulable=bool(spec.get("unschedulable", False)),
        taints=taints_of(spec),
        gpu_model=spec.get("gpu_model"),
        gpu_driver=spec.get("gpu_driver"),
        gpu_capabilities=tuple(spec.get("gpu_capabilities", ())),
        license_tier=spec.get("license_tier"),
        runtime=runtime_of(spec),
        volumes=volume_pools_of(spec),
        download_bps=parse_bits_per_second(network["download"]) if "download" in network else None,
        upload_bps=parse_bits_per_second(network["upload"]) if "upload" in network else None,
        images=frozenset(status.get("images", [])),
        overcommit={resource: float(factor) for resource, factor in spec.get("overcommit", {}).items()},
    )
