"""One schema per kind: how its ``spec`` and ``status`` are read and checked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from loadmaster.manifests.errors import Problems
from loadmaster.manifests.kind_names import DEPLOYMENT, JOB, NODE, QUEUE, REPLICA, WORKER_TEMPLATE
from loadmaster.manifests.kinds import deployment, job, node, queue, replica, worker_template
from loadmaster.manifests.validation import Reader

SpecReader = Callable[[Problems, object, str], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class KindSchema:
    read_spec: SpecReader  # (problems, spec, object name) -> normalized spec
    read_status: Reader
    spec_required: bool  # False where every spec field has a default (a bare Node or Queue is useful)


KIND_SCHEMAS: dict[str, KindSchema] = {
    NODE: KindSchema(node.read_spec, node.read_status, spec_required=False),
    QUEUE: KindSchema(queue.read_spec, queue.read_status, spec_required=False),
    DEPLOYMENT: KindSchema(deployment.read_spec, deployment.read_status, spec_required=True),
    JOB: KindSchema(job.read_spec, job.read_status, spec_required=True),
    WORKER_TEMPLATE: KindSchema(worker_template.read_spec, worker_template.read_status, spec_required=True),
    REPLICA: KindSchema(replica.read_spec, replica.read_status, spec_required=True),
}
