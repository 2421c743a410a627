"""``get nodes -o wide``'s GPU columns: per node, the largest GPU request it could take now and the GPU
capacity fragmented for the workload's shapes (``placement/gpu_fragmentation_report.py``).

The CLI sees what the server stores: the nodes and the replicas. It rebuilds the cluster the scheduler
would see (replicas holding a node as Running tasks there, in creation order, so GPU shares land on
devices as the scheduler puts them) and measures it against the shapes of the GPU replicas listed; the
server's ``/metrics`` uses the shapes it has learned over time instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from loadmaster.core.model import Cluster, Job, Node, Task
from loadmaster.core.resources import GPU
from loadmaster.core.snapshot import ClusterSnapshot, SnapshotError
from loadmaster.manifests import node_from_manifest, task_from_replica
from loadmaster.manifests.task_model import is_schedulable
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
        return gpu_fragmentation_report(ClusterSnapshot(_cluster(shapes, replicas))).nodes
    except (SnapshotError, ValueError, TypeError, KeyError):
        return {}


def _cluster(nodes: list[Node], replicas: Sequence[Obj]) -> Cluster:
    names = {node.name for node in nodes}
    tasks: list[Task] = []
    for replica in sorted(replicas, key=_creation_order):
        if not is_schedulable(replica):
            continue
        task = task_from_replica(replica)
        if task.node is None or task.node in names:  # Pending ones count among the shapes
            tasks.append(task)
    jobs = tuple(Job(task.name, (dataclasses.replace(task, job=task.name),)) for task in tasks)
    return Cluster(tuple(sorted(nodes, key=lambda node: node.name)), jobs)


def _creation_order(replica: Obj) -> tuple[str, str]:
    metadata = replica.get("metadata") or {}
    return str(metadata.get("created_at", "")), str(metadata.get("name", ""))
