"""``loadmaster get``'s columns per kind: what an operator looks for first (L7), more with ``-o wide``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from loadmaster.cli.views.age import age
from loadmaster.cli.views.columns import Column, Obj, TableContext, key_values, name_of, spec_of, status_of
from loadmaster.cli.views.queue_state import QUEUE_STATE_COLUMNS
from loadmaster.cli.views.usage import (
    node_allocatable,
    replica_node,
    replica_phase,
    replica_request,
    short_quantity,
    used_of_allocatable,
)
from loadmaster.core.model import DEFAULT_TAINT_EFFECT
from loadmaster.core.resources import CPU, GPU, MEMORY
from loadmaster.manifests import DEPLOYMENT, JOB, NODE, QUEUE, REPLICA, WORKER_TEMPLATE
from loadmaster.placement.gpu_fragmentation_report import NodeGpuFragmentation

# Kinds whose tables count or sum replicas, so `get` must fetch the replicas too.
NEEDS_REPLICAS = frozenset({NODE, DEPLOYMENT, JOB})


def _age(obj: Obj, context: TableContext) -> str:
    return age((obj.get("metadata") or {}).get("created_at"), context.now)


NAME = Column("NAME", lambda obj, _: name_of(obj))
AGE = Column("AGE", _age)
LABELS = Column(
    "LABELS", lambda obj, _: key_values((obj.get("metadata") or {}).get("labels")), wide_only=True
)


def _resource_cell(resource: str) -> Column:
    def cell(node: Obj, context: TableContext) -> str:
        return used_of_allocatable(resource, context.used.get(name_of(node), {}), node_allocatable(node))

    return Column(resource.upper(), cell)


def _gpu_cell(read: Callable[[NodeGpuFragmentation], float]) -> Callable[[Obj, TableContext], str]:
    def cell(node: Obj, context: TableContext) -> str:
        view = context.gpu.get(name_of(node))
        return "-" if view is None else f"{read(view):.2f}".rstrip("0").rstrip(".")

    return cell


def _taints(node: Obj, _: TableContext) -> str:
    taints = spec_of(node).get("taints") or []
    return (
        ",".join(
            f"{t.get('key')}={t.get('value', '')}:{t.get('effect', DEFAULT_TAINT_EFFECT)}" for t in taints
        )
        or "-"
    )


NODE_COLUMNS = (
    NAME,
    Column("STATE", lambda node, _: str(status_of(node).get("state", "Unknown"))),
    Column("CORDONED", lambda node, _: "yes" if spec_of(node).get("unschedulable") else "no"),
    _resource_cell(CPU),
    _resource_cell(MEMORY),
    _resource_cell(GPU),
    Column("REPLICAS", lambda node, context: str(_holding_count(node, context))),
    # the largest GPU request the node could take now, and its free GPUs that typical shapes cannot use
    Column("GPU-LARGEST", _gpu_cell(lambda view: view.largest_gpus), wide_only=True),
    Column("GPU-FRAG", _gpu_cell(lambda view: view.fragmented_gpus), wide_only=True),
    Column("HEARTBEAT", lambda node, context: age(status_of(node).get("last_heartbeat"), context.now), True),
    Column("TAINTS", _taints, wide_only=True, free_text=True),
    LABELS,
    AGE,
)


def _holding_count(node: Obj, context: TableContext) -> int:
    name = name_of(node)
    return sum(1 for r in context.replicas if replica_node(r) == name and replica_phase(r) != "Terminated")


def latest_phase_condition(replica: Obj) -> Mapping[str, Any]:
    """The replica's most recent ``Phase`` condition (the scheduler writes one per attempt), or {}."""
    conditions = [c for c in status_of(replica).get("conditions") or [] if c.get("type") == "Phase"]
    return conditions[-1] if conditions else {}


def _reason(replica: Obj, _: TableContext) -> str:
    return str(latest_phase_condition(replica).get("reason") or "-")


def _message(replica: Obj, _: TableContext) -> str:
    return str(latest_phase_condition(replica).get("message") or "-")


def _owner(replica: Obj, _: TableContext) -> str:
    spec = spec_of(replica)
    owner = f"{str(spec.get('owner_kind', '')).lower()}/{spec.get('owner', '')}"
    return f"{owner}/{spec['service']}" if spec.get("service") else owner


def _request_cell(resource: str) -> Column:
    def cell(replica: Obj, _: TableContext) -> str:
        amount = replica_request(replica).get(resource)
        return short_quantity(resource, amount) if amount else "-"

    return Column(resource.upper(), cell, wide_only=True)


REPLICA_COLUMNS = (
    NAME,
    Column("PHASE", lambda r, _: replica_phase(r)),
    Column("NODE", lambda r, _: replica_node(r) or "-"),
    AGE,
    Column("REASON", _reason),
    Column("OWNER", _owner, wide_only=True),
    _request_cell(CPU),
    _request_cell(MEMORY),
    _request_cell(GPU),
    Column("RESTARTS", lambda r, _: str(status_of(r).get("restart_count", 0)), wide_only=True),
    Column("MESSAGE", _message, wide_only=True, free_text=True),
)


def _owned_phases(owner_kind: str, owner: Obj, context: TableContext) -> Counter[str]:
    name = name_of(owner)
    return Counter(
        replica_phase(r)
        for r in context.replicas
        if spec_of(r).get("owner_kind") == owner_kind and spec_of(r).get("owner") == name
    )


def _deployment_ready(deployment: Obj, context: TableContext) -> str:
    phases = _owned_phases(DEPLOYMENT, deployment, context)
    services = spec_of(deployment).get("services") or []
    if any(s.get("placement") == "global" for s in services):
        desired: int | str = sum(phases.values()) - phases["Terminating"] - phases["Terminated"]
    else:
        desired = sum(int(s.get("replicas", 1)) for s in services)
    return f"{phases['Running']}/{desired}"


def _phase_count(owner_kind: str, phase: str) -> Column:
    return Column(phase.upper(), lambda obj, context: str(_owned_phases(owner_kind, obj, context)[phase]))


DEPLOYMENT_COLUMNS = (
    NAME,
    Column("SERVICES", lambda d, _: ",".join(s.get("name", "") for s in spec_of(d).get("services") or [])),
    Column("RUNNING", _deployment_ready),
    _phase_count(DEPLOYMENT, "Scheduled"),
    _phase_count(DEPLOYMENT, "Pending"),
    LABELS,
    AGE,
)

JOB_COLUMNS = (
    NAME,
    Column("QUEUE", lambda j, _: str(spec_of(j).get("queue", "-"))),
    Column("PRIORITY", lambda j, _: str(spec_of(j).get("priority", "-"))),
    Column("TASKS", lambda j, _: str(spec_of(j).get("tasks", "-"))),
    Column("MIN", lambda j, _: str(spec_of(j).get("min_available", "-"))),
    _phase_count(JOB, "Running"),
    _phase_count(JOB, "Scheduled"),
    _phase_count(JOB, "Pending"),
    _phase_count(JOB, "Succeeded"),
    LABELS,
    AGE,
)

QUEUE_COLUMNS = (
    NAME,
    Column("PARENT", lambda q, _: str(spec_of(q).get("parent") or "-")),
    Column("PRIORITY", lambda q, _: str(spec_of(q).get("priority", 0))),
    Column("WEIGHT", lambda q, _: str(spec_of(q).get("over_quota_weight", 1))),
    *QUEUE_STATE_COLUMNS,  # live: ALLOCATED DESERVED FAIR SHARE LIMIT DOMINANT
    LABELS,
    AGE,
)

WORKER_TEMPLATE_COLUMNS = (
    NAME,
    Column("CAPACITY", lambda t, _: key_values(spec_of(t).get("capacity"))),
    Column("TEMPLATE-LABELS", lambda t, _: key_values(spec_of(t).get("labels"))),
    LABELS,
    AGE,
)

COLUMNS_BY_KIND: Mapping[str, tuple[Column, ...]] = {
    NODE: NODE_COLUMNS,
    REPLICA: REPLICA_COLUMNS,
    DEPLOYMENT: DEPLOYMENT_COLUMNS,
    JOB: JOB_COLUMNS,
    QUEUE: QUEUE_COLUMNS,
    WORKER_TEMPLATE: WORKER_TEMPLATE_COLUMNS,
}
