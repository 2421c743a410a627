"""Builders for controller views: short calls with the defaults tests do not care about."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from loadmaster.controllers.views import (
    DEPLOYMENT,
    JOB,
    PENDING,
    DeploymentView,
    JobView,
    NodeView,
    ReplicaView,
    ServiceView,
)

NOW = datetime(2026, 11, 21, 10, 0, 0, tzinfo=UTC)
HASH = "a" * 64
OTHER_HASH = "b" * 64


def replica(
    index: int | None = 0,
    *,
    deployment: str = "shop",
    service: str = "api",
    phase: str = PENDING,
    node: str | None = None,
    spec_hash: str = HASH,
    host: str | None = None,
    revision: int = 7,
) -> ReplicaView:
    name = f"{deployment}-{service}-{host if host is not None else index}"
    return ReplicaView(name, DEPLOYMENT, deployment, service, index, host, spec_hash, phase, node, revision)


def job_replica(
    index: int, *, job: str = "train", phase: str = PENDING, node: str | None = None, spec_hash: str = HASH
) -> ReplicaView:
    return ReplicaView(f"{job}-{index}", JOB, job, None, index, None, spec_hash, phase, node, 5)


def service(
    replicas: int = 3, placement: str = "spread", spec_hash: str = HASH, name: str = "api"
) -> ServiceView:
    return ServiceView(name, placement, replicas, spec_hash)


def deployment(*services: ServiceView, name: str = "shop") -> DeploymentView:
    return DeploymentView(name, services or (service(),))


def job(tasks: int = 3, spec_hash: str = HASH, name: str = "train") -> JobView:
    return JobView(name, tasks, spec_hash)


def node(
    name: str, *, age_s: float | None = 10.0, state: str | None = "Ready", cordoned: bool = False
) -> NodeView:
    heartbeat = None if age_s is None else NOW - timedelta(seconds=age_s)
    return NodeView(name, state, heartbeat, cordoned, 3)
