"""``get nodes -o wide``'s GPU columns: per node, the largest GPU request it could take now and the GPU
capacity fragmented for the workload's shapes (``placement/gpu_fragmentation_report.py``).

The CLI sees what the server stores: the nodes and the replicas. It rebuilds the cluster the scheduler
would see (``manifests/model/stored_cluster.py``) and measures it against the shapes of the GPU replicas
listed; the server's ``/metrics`` uses the shapes it has learned over time instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from loadmaster.core.columns.snapshot import ClusterSnapshot, SnapshotError
from loadmaster.core.resources import GPU
from loadmaster.manifests import node_from_manifest
from loadmaster.manifests.model.stored_cluster import stored_cluster
from loadmaster.placement.gpu_fragmentation_report import NodeGpuFragmentation, gpu_fragmentation_report

Obj = Mapping[str, Any]


def gpu_fragmentation_by_node(
    nodes: Sequence[Obj], replicas: Sequence[Obj], now: datetime
) -> dict[str, NodeGpuFragmentation]:
    """The GPU view of each node with GPUs; {} when the objects do not make a consistent cluster (the
    columns then show ``-``)."""
    try:
        shapes = [node_from_manifest(node, now) for node in nodes]
        if not any(node.allocatable.get(GPU, 0) for node in shapes):
            return {}
        return gpu_fragmentation_report(ClusterSnapshot(stored_cluster(shapes, replicas))).nodes
    except (SnapshotError, ValueError, TypeError, KeyError):
        return {}
