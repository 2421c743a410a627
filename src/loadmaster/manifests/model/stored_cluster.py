"""The cluster the scheduler would see, rebuilt from stored objects (nodes and replicas) by a reader that
has no cycle of its own: ``get nodes -o wide`` and the API's node read model (their GPU figures).

Replicas holding a node become Running tasks there, in creation order (then name), so GPU shares land on
devices as the scheduler put them (``core/devices.py``: device placement depends on order); Pending ones
stay Pending and count among the workload's GPU shapes. Each replica is a job of its own: only where
things are matters here, not gangs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from loadmaster.core.model import Cluster, Job, Node, Task
from loadmaster.manifests.model.task_model import is_schedulable, task_from_replica

Obj = Mapping[str, Any]


def stored_cluster(nodes: Sequence[Node], replicas: Sequence[Obj]) -> Cluster:
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
