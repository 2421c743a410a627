"""Small clusters for the rebalancer's unit tests: nodes with one pressure sample, replicas on them."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from loadmaster.controllers.rebalancing.rebalance_inputs import NodeColumns, ReplicaColumns

GIB = 2.0**30


@dataclass(slots=True)
class SampledNode:
    name: str
    cpu: float | None = None  # the sample (None: no sample)
    memory: float = 0.0
    sampled_at: float = 0.0
    cores: float = 10.0
    memory_bytes: float = 10 * GIB
    can_receive: bool = True
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class PlacedReplica:
    name: str
    node: str
    cpu: float | None = 2.0  # cores; None: not declared
    memory: float | None = 0.5 * GIB
    deployment: str = "web"
    service: str = "api"
    spread: bool = False
    movable: bool = True
    bound_at: float = -3600.0
    node_selector: dict[str, str] | None = None


def node_columns(nodes: list[SampledNode], replicas: list[PlacedReplica]) -> NodeColumns:
    nodes = sorted(nodes, key=lambda n: n.name)
    names = tuple(n.name for n in nodes)
    requested = np.zeros((2, len(nodes)))
    for r in replicas:
        i = names.index(r.node)
        requested[:, i] += (r.cpu or 0.0, r.memory or 0.0)
    return NodeColumns(
        names=names,
        allocatable=np.array([[n.cores for n in nodes], [n.memory_bytes for n in nodes]]),
        requested=requested,
        sample=np.array(
            [[np.nan if n.cpu is None else n.cpu for n in nodes], [n.memory for n in nodes]], dtype=float
        ),
        sample_at=np.array([np.nan if n.cpu is None else n.sampled_at for n in nodes]),
        can_receive=np.array([n.can_receive for n in nodes]),
        labels=tuple(n.labels for n in nodes),
    )


def replica_columns(nodes: NodeColumns, replicas: list[PlacedReplica]) -> ReplicaColumns:
    replicas = sorted(replicas, key=lambda r: r.name)
    services = tuple(sorted({(r.deployment, r.service) for r in replicas}))
    return ReplicaColumns(
        names=tuple(r.name for r in replicas),
        node=np.array([nodes.names.index(r.node) for r in replicas], dtype=np.int64),
        request=np.array([[r.cpu or 0.0 for r in replicas], [r.memory or 0.0 for r in replicas]]),
        declared=np.array([[r.cpu is not None for r in replicas], [r.memory is not None for r in replicas]]),
        service=np.array([services.index((r.deployment, r.service)) for r in replicas], dtype=np.int64),
        services=services,
        spread=np.array([r.spread for r in replicas]),
        movable=np.array([r.movable for r in replicas]),
        bound_at=np.array([r.bound_at for r in replicas]),
        node_selector={i: r.node_selector for i, r in enumerate(replicas) if r.node_selector},
    )


def columns(nodes: list[SampledNode], replicas: list[PlacedReplica]) -> tuple[NodeColumns, ReplicaColumns]:
    node_cols = node_columns(nodes, replicas)
    return node_cols, replica_columns(node_cols, replicas)
