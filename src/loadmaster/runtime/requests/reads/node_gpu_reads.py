"""The GPU part of a node's read model: ``status.gpu`` of ``GET /api/nodes`` and ``GET /api/nodes/{name}``,
computed when read and never stored (a watch event carries the stored node, without it)::

    "gpu": {"largest_schedulable": 2.0, "fragmented": 0.35,
            "devices": [{"index": 0, "model": "A100", "used": 0.5, "replicas": ["train-0", "web-api-1"]},
                        {"index": 1, "model": "A100", "used": 0.0, "replicas": []}, ...]}

The figures are those of ``loadmaster get nodes -o wide`` (GPU-LARGEST, GPU-FRAG), from the same
rebuilt cluster (``manifests/model/stored_cluster.py``): every node and every replica the server's cache
holds, replicas placed on devices in creation order as the scheduler places them. ``largest_schedulable``: the
largest GPU request the node could take now (whole GPUs, or a share of one device); ``fragmented``: its
free GPU the workload's shapes cannot use (``placement/gpu_fragmentation_report.py``); per device, the
share held (by Running, bound and Releasing replicas) and the replicas holding it. Only nodes with GPUs
get the section; objects that do not make a consistent cluster give none (the read still answers).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from loadmaster.core.columns.snapshot import ClusterSnapshot, SnapshotError
from loadmaster.core.columns.task_columns import NO_NODE
from loadmaster.core.resources import GPU, GPU_DEVICE
from loadmaster.manifests import NODE, REPLICA, node_from_manifest
from loadmaster.manifests.model.stored_cluster import stored_cluster
from loadmaster.placement.gpu_fragmentation_report import gpu_fragmentation_report
from loadmaster.runtime.control_plane import ControlPlane

Obj = dict[str, Any]


async def with_gpu_status(plane: ControlPlane, nodes: Sequence[Obj]) -> list[Obj]:
    """``nodes`` (as read), each with a GPU gets ``status.gpu`` from the cluster the cache holds."""
    cache = plane.cache
    await cache.catch_up()
    views = gpu_views(
        [c.obj for c in cache.objects[NODE].values()],
        [c.obj for c in cache.objects[REPLICA].values()],
        plane.clock.now(),
    )
    if not views:
        return list(nodes)
    return [_with(node, views.get(node.get("metadata", {}).get("name", ""))) for node in nodes]


def _with(node: Obj, view: Obj | None) -> Obj:
    if view is None:
        return node
    return {**node, "status": {**node.get("status", {}), "gpu": view}}


def gpu_views(nodes: Sequence[Obj], replicas: Sequence[Obj], now: datetime) -> dict[str, Obj]:
    """Per node with GPUs, its ``status.gpu`` (module doc); {} for a cluster without GPUs."""
    try:
        shapes = [node_from_manifest(node, now) for node in nodes]
        if not any(node.allocatable.get(GPU, 0) for node in shapes):
            return {}
        snapshot = ClusterSnapshot(stored_cluster(shapes, replicas))
        report = gpu_fragmentation_report(snapshot)
    except (SnapshotError, ValueError, TypeError, KeyError):
        return {}
    holders = _device_holders(snapshot)
    devices = snapshot.state.devices
    views = {}
    for name, figures in report.nodes.items():
        n = snapshot.node_index[name]
        model = snapshot.nodes[n].gpu_model
        held = devices.used[n] + devices.releasing[n]
        count = int((devices.capacity[n] > 0).sum())
        views[name] = {
            "largest_schedulable": figures.largest_gpus,
            "fragmented": figures.fragmented_gpus,
            "devices": [
                {
                    "index": d,
                    "model": model,
                    "used": round(int(held[d]) / GPU_DEVICE, 3),
                    "replicas": sorted(holders.get((n, d), ())),
                }
                for d in range(count)
            ],
        }
    return views


def _device_holders(snapshot: ClusterSnapshot) -> dict[tuple[int, int], list[str]]:
    """(node, device) -> the replicas holding a share of it (records carry the devices of input tasks)."""
    holders: dict[tuple[int, int], list[str]] = defaultdict(list)
    for t, record in snapshot.state.records.items():
        if record.node == NO_NODE:
            continue
        for d in record.devices:
            holders[(record.node, d)].append(snapshot.tasks[t].name)
    return holders
