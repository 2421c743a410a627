"""Replica objects -> ``core.model.Task`` and ``core.model.Job``: what the scheduler sees of them.

A deployment's service is one job whose tasks are its replicas; its job name is
``<deployment>/<service>`` (the '/' keeps it apart from any Job, whose names are DNS-safe). A Job's
tasks are its replicas and its job name is its own name. Placement modes stay the control plane's
business; a task carries what they need: ``hosts`` for ``placement: hosts``, its own host for a
``global`` replica, and the service's selectors, tolerations, ports and GPU fields.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from loadmaster.core.columns.taints import CORDON_TAINT
from loadmaster.core.model import (
    ImageRef,
    LabelExpression,
    LabelSelector,
    PreferredTerm,
    RuntimeRequirement,
    Task,
    TaskStatus,
    Toleration,
    TopologySpreadConstraint,
    VolumeClaim,
)
from loadmaster.core.resources import (
    ADDRESSES,
    GPU,
    GPU_DEVICE,
    MEMORY,
    ONE_ADDRESS,
    parse_quantity,
    parse_resources,
)
from loadmaster.fields.gpu_requests import GpuDevices, is_device_request, parse_gpu_devices
from loadmaster.manifests.kind_names import DEPLOYMENT
from loadmaster.manifests.manifest import Manifest
from loadmaster.manifests.model.node_model import as_manifest
from loadmaster.manifests.replicas import FINISHED_PHASES, ReplicaPhase
from loadmaster.manifests.timestamps import parse_timestamp

_TASK_STATUS = {
    ReplicaPhase.PENDING: TaskStatus.PENDING,
    # Scheduled holds its node's resources although the agent has not started it yet.
    ReplicaPhase.SCHEDULED: TaskStatus.RUNNING,
    ReplicaPhase.RUNNING: TaskStatus.RUNNING,
    ReplicaPhase.TERMINATING: TaskStatus.RELEASING,
}


def service_job_name(deployment: str, service: str) -> str:
    return f"{deployment}/{service}"


def job_name_of(spec: Mapping[str, Any]) -> str:
    """The job a replica belongs to, from its spec's owner fields."""
    if spec.get("owner_kind") == DEPLOYMENT:
        return service_job_name(spec["owner"], spec["service"])
    return str(spec["owner"])


def phase_of(replica: Manifest) -> ReplicaPhase:
    return ReplicaPhase(replica.status.get("phase", ReplicaPhase.PENDING))


def is_schedulable(replica: Manifest | Mapping[str, Any]) -> bool:
    """True if the replica holds or wants resources: not finished, and not stopping before placement."""
    manifest = as_manifest(replica)
    phase = phase_of(manifest)
    if phase in FINISHED_PHASES:
        return False
    return phase != ReplicaPhase.TERMINATING or "node_ref" in manifest.status


def task_from_replica(replica: Manifest | Mapping[str, Any]) -> Task:
    """One replica as a task. Finished replicas are refused: a Failed one is never rescheduled (A7)."""
    manifest = as_manifest(replica)
    spec, status, phase = manifest.spec, manifest.status, phase_of(manifest)
    if not is_schedulable(manifest):
        raise ValueError(
            f"replicas/{manifest.name}: phase {phase} holds no resources; leave it out of the cluster"
        )
    node = status.get("node_ref") if phase != ReplicaPhase.PENDING else None
    if node is None and phase != ReplicaPhase.PENDING:
        raise ValueError(f"replicas/{manifest.name}: status.node_ref is required when the phase is {phase}")
    gpu_devices = _gpu_devices(spec)
    return Task(
        name=manifest.name,
        job=job_name_of(spec),
        request=request_of(spec, status.get("devices", ()) if node else ()),
        status=_TASK_STATUS[phase],
        node=node,
        devices=tuple(int(d) for d in status.get("devices", ()) or ()) if node else (),
        labels=dict(spec.get("labels", {})),
        node_selector=dict(spec.get("node_selector", {})),
        tolerations=_tolerations(spec),
        preferred_node_affinity=tuple(_preferred_term(t) for t in spec.get("preferred_node_affinity", [])),
        topology_spread_constraints=tuple(_spread(c) for c in spec.get("topology_spread_constraints", [])),
        hosts=_hosts(spec),
        avoid_nodes=tuple(spec.get("avoid_nodes", ())),
        ports=tuple(spec.get("ports", [])),
        gpu_models=tuple(spec["gpu_models"]) if "gpu_models" in spec else None,
        gpu_all=gpu_devices is not None and gpu_devices.count is None,
        gpu_match=None if gpu_devices is None else gpu_devices.match,
        license_tier=spec.get("license_tier"),
        runtime=_runtime(spec.get("runtime")),
        volumes=tuple(_volume(v) for v in spec.get("volumes", [])),
        # Only a replica waiting to be placed uses it (stickiness); on a placed one it is a record.
        previous_node=status.get("previous_node_ref") if phase == ReplicaPhase.PENDING else None,
        image=_image(spec),
        bound_at_s=bound_at_s(status),
        overcommit=bool(spec.get("overcommit", False)),
    )


def bound_at_s(status: Mapping[str, Any]) -> float | None:
    """The replica's latest bind in POSIX seconds (None: never placed): ``bound_at`` (written by every
    scheduler bind), else its start, else, for a replica with a node (a replacement created bound to a
    reserved node), its Phase condition's time."""
    stamp = status.get("bound_at") or status.get("started_at")
    if stamp is None and status.get("node_ref"):
        phases = [c for c in status.get("conditions", []) or [] if c.get("type") == "Phase"]
        stamp = phases[-1].get("last_transition_time") if phases else None
    return parse_timestamp(stamp).timestamp() if isinstance(stamp, str) else None


def request_of(spec: Mapping[str, Any], devices: Sequence[int] = ()) -> dict[str, int]:
    """``resources`` plus the ``gpus`` shorthand; ``gpus: 0`` adds nothing (so it never enters scoring).
    A compose device request counts its ``count``; ``all`` counts the ``devices`` the replica was given
    (``status.devices``), and nothing while it has none (the scheduler gives it every device of a node).
    A service with ``address: true`` requests one ``addresses``."""
    request = parse_resources(spec.get("resources"))
    if spec.get("address"):  # one address of its node's pool (docs/addresses.md)
        request[ADDRESSES] = ONE_ADDRESS
    if "gpus" not in spec:
        return request
    written = spec["gpus"]
    if is_device_request(written):
        count = parse_gpu_devices(written).count
        gpus = (len(devices) if count is None else count) * GPU_DEVICE
    else:
        gpus = parse_quantity(GPU, written)
    if gpus:
        request[GPU] = gpus
    return request


def _gpu_devices(spec: Mapping[str, Any]) -> GpuDevices | None:
    written = spec.get("gpus")
    return parse_gpu_devices(written) if is_device_request(written) else None


def _hosts(spec: Mapping[str, Any]) -> tuple[str, ...] | None:
    if spec.get("placement") == "hosts":
        return tuple(spec.get("hosts", []))
    if spec.get("placement") == "global" and "host" in spec:
        return (spec["host"],)  # a global replica belongs to one node
    return None


# A global replica runs on its node whether or not the node is cordoned (the timeline spec's "Global":
# daemonsets tolerate cordon), so it tolerates the taint a cordon implies.
_CORDON_TOLERATION = Toleration(key=CORDON_TAINT.key, operator="Exists", value="", effect=CORDON_TAINT.effect)


def _tolerations(spec: Mapping[str, Any]) -> tuple[Toleration, ...]:
    tolerations = tuple(_toleration(t) for t in spec.get("tolerations", []))
    if spec.get("placement") == "global" and "host" in spec:
        return (*tolerations, _CORDON_TOLERATION)
    return tolerations


def _toleration(t: Mapping[str, Any]) -> Toleration:
    return Toleration(
        key=t.get("key"),
        operator=t.get("operator", "Equal"),
        value=t.get("value", ""),
        effect=t.get("effect"),
    )


def _expressions(items: Sequence[Mapping[str, Any]]) -> tuple[LabelExpression, ...]:
    return tuple(LabelExpression(e["key"], e["operator"], tuple(e.get("values", []))) for e in items)


def _preferred_term(t: Mapping[str, Any]) -> PreferredTerm:
    return PreferredTerm(
        weight=t["weight"],
        match_labels=tuple(t.get("match_labels", {}).items()),
        match_expressions=_expressions(t.get("match_expressions", [])),
    )


def _spread(c: Mapping[str, Any]) -> TopologySpreadConstraint:
    selector = c.get("label_selector", {})
    return TopologySpreadConstraint(
        max_skew=c["max_skew"],
        topology_key=c["topology_key"],
        when_unsatisfiable=c.get("when_unsatisfiable", "DoNotSchedule"),
        label_selector=LabelSelector(
            match_labels=tuple(selector.get("match_labels", {}).items()),
            match_expressions=_expressions(selector.get("match_expressions", [])),
        ),
    )


def _runtime(runtime: Mapping[str, Any] | None) -> RuntimeRequirement | None:
    if runtime is None:
        return None
    return RuntimeRequirement(
        versions=tuple(runtime.get("versions", {}).items()), features=tuple(runtime.get("features", []))
    )


def _volume(v: Mapping[str, Any]) -> VolumeClaim:
    return VolumeClaim(
        size_bytes=parse_quantity(MEMORY, v["size"]),
        match_labels=tuple(v.get("match_labels", {}).items()),
        ephemeral=bool(v.get("ephemeral", False)),
    )


def _image(spec: Mapping[str, Any]) -> ImageRef | None:
    if "image" not in spec:
        return None
    size = parse_quantity(MEMORY, spec["image_size"]) if "image_size" in spec else 0
    return ImageRef(name=spec["image"], size_bytes=size)
