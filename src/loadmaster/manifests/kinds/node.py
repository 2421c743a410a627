"""Node: a machine that runs replicas. The agent registers it; users apply it to label or cordon it."""

from __future__ import annotations

from typing import Any

from loadmaster.core.model import NODE_STATES
from loadmaster.fields.overcommit import overcommit_factor_problem, overcommit_resource_problem
from loadmaster.manifests.constraint_fields import node_runtime, taints, volume_pools
from loadmaster.manifests.errors import Problems
from loadmaster.manifests.kinds.status_fields import conditions
from loadmaster.manifests.quantity_fields import parsed_or_none, resources, throughput, timestamp
from loadmaster.manifests.validation import (
    Reader,
    at,
    boolean,
    describe,
    dns_name,
    list_of,
    number,
    object_of,
    one_of,
    read_object,
    string_list,
    text,
)

# Fields that describe a machine's shape; a WorkerTemplate (a node that can be provisioned) shares them.
NODE_SHAPE_FIELDS: dict[str, Reader] = {
    "capacity": resources(whole_gpus=True),
    "system_reserved": resources(whole_gpus=True),
    "taints": taints,
    "gpu_model": text,
    "gpu_driver": text,  # the driver of the node's GPUs (compose device requests match it)
    "gpu_capabilities": string_list,  # what they can do besides "gpu": compute, utility, video, ...
    "license_tier": text,
    "runtime": node_runtime,
    "volumes": volume_pools,
}


def check_reserved_fits(problems: Problems, path: str, read: dict[str, Any]) -> None:
    """system_reserved <= capacity for every resource (a resource missing from capacity is 0)."""
    capacity = parsed_or_none(read.get("capacity", {}))
    reserved = parsed_or_none(read.get("system_reserved", {}))
    if capacity is None or reserved is None:
        return  # already reported by the quantity readers
    for resource, amount in reserved.items():
        if amount > capacity.get(resource, 0):
            written = read["system_reserved"][resource]
            limit = read.get("capacity", {}).get(resource, 0)
            problems.add(
                at(at(path, "system_reserved"), resource),
                f"reserves {written} but the capacity is {limit}",
            )


def overcommit(problems: Problems, path: str, value: object) -> dict[str, Any]:
    """``overcommit: {cpu: 1.5, memory: 1.0}``: a factor >= 1 per resource (``fields/overcommit.py``)."""
    if not isinstance(value, dict):
        problems.add(path, f"expected a mapping of resource to factor, got {describe(value)}")
        return {}
    for resource, factor in value.items():
        problem = overcommit_resource_problem(resource)
        if problem is not None:
            problems.add(path, problem)
            continue
        problem = overcommit_factor_problem(factor)
        if problem is not None:
            problems.add(at(path, resource), problem)
    return dict(value)


def read_spec(problems: Problems, value: object, name: str) -> dict[str, Any]:
    # overcommit is the node's own choice, not its shape: a WorkerTemplate does not take it
    fields = {"unschedulable": boolean, **NODE_SHAPE_FIELDS, "overcommit": overcommit}
    read = read_object(problems, "spec", value, fields)
    check_reserved_fits(problems, "spec", read)
    read.setdefault("unschedulable", False)
    return read


def utilisation(problems: Problems, path: str, value: object) -> Any:
    """A share of the node in use, 0..1 (a pressure sample's cpu or memory)."""
    read = number(minimum=0)(problems, path, value)
    if isinstance(read, int | float) and read > 1:
        problems.add(path, f"must be at most 1 (a share of the node), got {read}")
    return read


# A pressure sample (JACO H1): utilisation, and when the server received it (``at``).
pressure_sample = object_of(
    {"cpu": utilisation, "memory": utilisation, "at": timestamp}, required=("cpu", "memory", "at")
)

_network = object_of({"download": throughput, "upload": throughput, "measured_at": timestamp})

# A graceful removal in progress or given up (``loadmaster node remove``; controllers/nodes/drain.py): kept in
# the Node, so a new leader continues it from the store.
DRAIN_STATES = ("draining", "timed_out")
_drain = object_of(
    {
        "state": one_of(*DRAIN_STATES),
        "started_at": timestamp,
        "deadline": timestamp,
        "replicas": list_of(dns_name),  # the replicas to move, as the drain started
        "not_moved": list_of(dns_name),  # after a timeout: the replicas that stayed
    },
    required=("state", "started_at", "deadline"),
)

read_status = object_of(
    {
        "drain": _drain,
        "state": one_of(*NODE_STATES),
        "last_heartbeat": timestamp,
        "allocatable": resources(whole_gpus=True),
        "network": _network,
        "conditions": conditions,
        "images": list_of(text),
        # The latest pressure sample, as register/heartbeat bodies or the node's status report give it.
        "pressure": pressure_sample,
        # Published by the real node agent (docs/agent.md): where it answers GET /probe (and logs), and
        # how it runs replicas.
        "probe_address": text,
        "agent": object_of({"driver": text, "limits": text, "work_dir": text}),
    }
)
