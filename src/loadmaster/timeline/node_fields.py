"""A simulated node of a timeline (``nodes:`` or ``add_node``): the scenario format's node fields, without
``state`` (a timeline node is Ready from its first heartbeat) or tasks, as the agent's registration body.

The fields are checked by the scenario format's own node reader, then written as an agent would send
them (``POST /api/nodes/register``): ``allocatable`` becomes ``system_reserved = capacity - allocatable``,
the registration's way of saying the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loadmaster.core.model import DEFAULT_LICENSE_TIERS
from loadmaster.core.resources import format_quantity
from loadmaster.scenario.errors import ScenarioError
from loadmaster.scenario.fields import as_mapping
from loadmaster.scenario.nodes import as_node

# Registration fields copied as the file wrote them (validated again by the server).
_COPIED = ("labels", "taints", "gpu_model", "license_tier", "runtime", "volumes", "network", "images")


@dataclass(frozen=True, slots=True)
class NodeRegistration:
    name: str
    body: dict[str, Any]  # the registration body
    unschedulable: bool  # cordoned right after it registers


def as_registration(value: object, path: str) -> NodeRegistration:
    mapping = as_mapping(value, path)
    if "state" in mapping:
        raise ScenarioError(
            f"{path}.state",
            "a timeline node has no state: it is Ready from its first heartbeat (use node_down)",
        )
    node = as_node(mapping, path, DEFAULT_LICENSE_TIERS)
    reserved = {
        resource: format_quantity(resource, amount - node.allocatable.get(resource, 0))
        for resource, amount in node.capacity.items()
        if amount > node.allocatable.get(resource, 0)
    }
    body: dict[str, Any] = {
        "name": node.name,
        "capacity": {r: format_quantity(r, amount) for r, amount in node.capacity.items()},
        "system_reserved": reserved,
    }
    body.update({key: mapping[key] for key in _COPIED if mapping.get(key) is not None})
    return NodeRegistration(node.name, body, node.unschedulable)
