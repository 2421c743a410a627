"""Manifests: the control plane's YAML objects, validated with field paths, and turned into the model.

``parse_manifests(text)`` reads ``apply -f`` input; ``manifest_from_object(obj)`` validates one decoded
object (a JSON body); the ``*_from_manifest`` / ``*_from_replica`` functions and ``job_spec`` build the
scheduler's model (``model/``). Public interface: ``shared/spec/manifests.md``.
"""

from loadmaster.manifests.documents import manifest_from_object, parse_manifests, split_documents
from loadmaster.manifests.errors import ManifestError, ManifestErrors
from loadmaster.manifests.kind_names import (
    API_VERSION,
    DEPLOYMENT,
    JOB,
    KINDS,
    NODE,
    QUEUE,
    REPLICA,
    USER_KINDS,
    WORKER_TEMPLATE,
    normalize_kind,
    object_ref,
    plural_of,
)
from loadmaster.manifests.manifest import Manifest
from loadmaster.manifests.model.to_model import (
    WorkerTemplate,
    node_from_manifest,
    queue_from_manifest,
    service_job_name,
    task_from_replica,
    worker_template_from_manifest,
)
from loadmaster.manifests.replica_specs import job_replica, service_replica
from loadmaster.manifests.replicas import (
    ReplicaCounter,
    ReplicaPhase,
    can_transition,
    global_replica_name,
    job_task_name,
    replica_name,
    spec_hash,
)

__all__ = [
    "API_VERSION",
    "DEPLOYMENT",
    "JOB",
    "KINDS",
    "NODE",
    "QUEUE",
    "REPLICA",
    "USER_KINDS",
    "WORKER_TEMPLATE",
    "Manifest",
    "ManifestError",
    "ManifestErrors",
    "ReplicaCounter",
    "ReplicaPhase",
    "WorkerTemplate",
    "can_transition",
    "global_replica_name",
    "job_replica",
    "job_task_name",
    "manifest_from_object",
    "node_from_manifest",
    "normalize_kind",
    "object_ref",
    "parse_manifests",
    "plural_of",
    "queue_from_manifest",
    "replica_name",
    "service_job_name",
    "service_replica",
    "spec_hash",
    "split_documents",
    "task_from_replica",
    "worker_template_from_manifest",
]
