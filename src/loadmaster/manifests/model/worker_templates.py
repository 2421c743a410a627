"""WorkerTemplate manifests -> node shapes the autoscaler may provision (LRS scale-up, K1)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from loadmaster.core.model import Node, NodeRuntime, Taint, VolumePool
from loadmaster.core.resources import parse_resources
from loadmaster.manifests.manifest import Manifest
from loadmaster.manifests.model.node_model import (
    allocatable_of,
    as_manifest,
    runtime_of,
    taints_of,
    volume_pools_of,
)


@dataclass(frozen=True, slots=True)
class WorkerTemplate:
    """A node that does not exist yet. ``cost`` orders the "smallest fit" tier (0 when unpriced)."""

    name: str
    capacity: dict[str, int]
    allocatable: dict[str, int]
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    gpu_model: str | None = None
    gpu_driver: str | None = None
    gpu_capabilities: tuple[str, ...] = ()
    license_tier: str | None = None
    runtime: NodeRuntime | None = None
    volumes: tuple[VolumePool, ...] = ()
    cost: float = 0.0

    def as_node(self, name: str) -> Node:
        """The Ready node this template would become, to ask "would it fit after a scale-up?"."""
        return Node(
            name=name,
            capacity=dict(self.capacity),
            allocatable=dict(self.allocatable),
            labels=dict(self.labels),
            taints=self.taints,
            gpu_model=self.gpu_model,
            gpu_driver=self.gpu_driver,
            gpu_capabilities=self.gpu_capabilities,
            license_tier=self.license_tier,
            runtime=self.runtime,
            volumes=self.volumes,
        )


def worker_template_from_manifest(manifest: Manifest | Mapping[str, Any]) -> WorkerTemplate:
    template = as_manifest(manifest)
    spec = template.spec
    return WorkerTemplate(
        name=template.name,
        capacity=parse_resources(spec.get("capacity")),
        allocatable=allocatable_of(spec, {}),
        labels=dict(spec.get("labels", {})),
        taints=taints_of(spec),
        gpu_model=spec.get("gpu_model"),
        gpu_driver=spec.get("gpu_driver"),
        gpu_capabilities=tuple(spec.get("gpu_capabilities", ())),
        license_tier=spec.get("license_tier"),
        runtime=runtime_of(spec),
        volumes=volume_pools_of(spec),
        cost=float(spec.get("cost", 0)),
    )
