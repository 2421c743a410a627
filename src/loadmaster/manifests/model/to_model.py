"""Stored objects -> the core model, so the control plane can build a ``core.model.Cluster``.

Nodes (``node_from_manifest``), queues (``queue_from_manifest``), worker templates
(``worker_template_from_manifest``) and replicas as tasks (``task_from_replica``); a job's own fields
are ``job_spec``'s. Each accepts a ``Manifest`` or a stored object dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadmaster.core.model import Queue
from loadmaster.core.resources import parse_resources
from loadmaster.manifests.manifest import Manifest
from loadmaster.manifests.model.node_model import as_manifest, node_from_manifest
from loadmaster.manifests.model.task_model import service_job_name, task_from_replica
from loadmaster.manifests.model.worker_templates import WorkerTemplate, worker_template_from_manifest


def queue_from_manifest(manifest: Manifest | Mapping[str, Any]) -> Queue:
    queue = as_manifest(manifest)
    spec = queue.spec
    return Queue(
        name=queue.name,
        parent=spec.get("parent"),
        priority=spec.get("priority", 0),
        deserved=parse_resources(spec.get("deserved")),
        limit=parse_resources(spec.get("limit")),
        over_quota_weight=float(spec.get("over_quota_weight", 1)),
    )


__all__ = [
    "WorkerTemplate",
    "node_from_manifest",
    "queue_from_manifest",
    "service_job_name",
    "task_from_replica",
    "worker_template_from_manifest",
]
