"""Cached objects -> the controllers' views (``controllers/views.py``), each built once per revision."""

from __future__ import annotations

from typing import Any

from loadmaster.controllers.views import DeploymentView, JobView, NodeView, ReplicaView, ServiceView
from loadmaster.manifests import Manifest, job_replica, service_replica
from loadmaster.manifests.timestamps import parse_timestamp
from loadmaster.runtime.object_cache import Cached


class ViewCache:
    """Views keyed by (kind, name) and remembered with the revision they were built from."""

    def __init__(self) -> None:
        self._views: dict[tuple[str, str], tuple[int, Any]] = {}

    def forget(self, kind: str, name: str) -> None:
        self._views.pop((kind, name), None)

    def _get(self, cached: Cached, build: Any) -> Any:
        key = (cached.kind, cached.name)
        hit = self._views.get(key)
        if hit is not None and hit[0] == cached.mod_revision:
            return hit[1]
        view = build(cached)
        self._views[key] = (cached.mod_revision, view)
        return view

    def replica(self, cached: Cached) -> ReplicaView:
        view: ReplicaView = self._get(cached, replica_view)
        return view

    def deployment(self, cached: Cached) -> DeploymentView:
        view: DeploymentView = self._get(cached, deployment_view)
        return view

    def job(self, cached: Cached) -> JobView:
        view: JobView = self._get(cached, job_view)
        return view

    def node(self, cached: Cached) -> NodeView:
        view: NodeView = self._get(cached, node_view)
        return view


def replica_view(cached: Cached) -> ReplicaView:
    spec, status = cached.obj.get("spec", {}), cached.obj.get("status", {})
    return ReplicaView(
        name=cached.name,
        owner_kind=str(spec.get("owner_kind", "")),
        owner=str(spec.get("owner", "")),
        service=spec.get("service"),
        index=spec.get("index"),
        host=spec.get("host"),
        spec_hash=str(spec.get("spec_hash", "")),
        phase=str(status.get("phase", "Pending")),
        node_ref=status.get("node_ref"),
        revision=cached.mod_revision,
    )


def deployment_view(cached: Cached) -> DeploymentView:
    """Each service with the spec_hash its replicas would carry (computed by the replica builder itself,
    so the controller compares like with like)."""
    deployment = Manifest.from_stored(cached.obj)
    services = []
    for service in deployment.spec.get("services", []):
        placement = str(service.get("placement", "spread"))
        probe = (
            service_replica(deployment, service["name"], host="probe")
            if placement == "global"
            else service_replica(deployment, service["name"], index=0)
        )
        services.append(
            ServiceView(service["name"], placement, int(service.get("replicas", 0)), probe.spec["spec_hash"])
        )
    return DeploymentView(deployment.name, tuple(services))


def job_view(cached: Cached) -> JobView:
    job = Manifest.from_stored(cached.obj)
    tasks = int(job.spec.get("tasks", 0))
    spec_hash = job_replica(job, 0).spec["spec_hash"] if tasks > 0 else ""
    return JobView(job.name, tasks, spec_hash)


def node_view(cached: Cached) -> NodeView:
    status: dict[str, Any] = cached.obj.get("status", {})
    heartbeat = status.get("last_heartbeat")
    return NodeView(
        name=cached.name,
        state=status.get("state"),
        last_heartbeat=parse_timestamp(heartbeat) if heartbeat else None,
        unschedulable=bool(cached.obj.get("spec", {}).get("unschedulable", False)),
        revision=cached.mod_revision,
    )
