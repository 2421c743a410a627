"""What a simulated node looks like: ``--capacity cpu=8,memory=32Gi,gpu=4`` and ``--labels k=v,...`` parsed
into the registration body of ``POST /api/nodes/register``, and the names of the N simulated nodes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loadmaster.core.resources import QuantityError, parse_quantity, validate_resource_name
from loadmaster.manifests.validation import DNS_NAME_MAX, dns_name_problem


class ShapeError(ValueError):
    """An option value that cannot describe a node; the message names the option and the bad part."""


@dataclass(frozen=True, slots=True)
class NodeShape:
    capacity: dict[str, str]
    labels: dict[str, str] = field(default_factory=dict)
    system_reserved: dict[str, str] = field(default_factory=dict)

    def registration(self, name: str) -> dict[str, Any]:
        """The body the agent sends for one node (docs/api.md, ``POST /api/nodes/register``)."""
        return {
            "name": name,
            "labels": dict(self.labels),
            "capacity": dict(self.capacity),
            "system_reserved": dict(self.system_reserved),
            "taints": [],
            "network": {},
        }


def _pairs(option: str, text: str) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for raw in text.split(","):
        part = raw.strip()
        if not part:
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ShapeError(f'{option}: expected key=value, got "{part}"')
        pairs.append((key.strip(), value.strip()))
    return pairs


def parse_capacity(text: str, option: str = "--capacity") -> dict[str, str]:
    """``"cpu=8,memory=32Gi"`` -> ``{"cpu": "8", "memory": "32Gi"}``, each quantity checked."""
    capacity: dict[str, str] = {}
    for resource, amount in _pairs(option, text):
        try:
            validate_resource_name(resource)
            parse_quantity(resource, amount)
        except QuantityError as exc:
            raise ShapeError(f"{option}: {resource}: {exc}") from None
        if resource in capacity:
            raise ShapeError(f"{option}: {resource} is given twice")
        capacity[resource] = amount
    if not capacity:
        raise ShapeError(f"{option}: give at least one resource, e.g. cpu=8,memory=32Gi")
    return capacity


def parse_labels(text: str, option: str = "--labels") -> dict[str, str]:
    """``"zone=a,tier=gpu"`` -> ``{"zone": "a", "tier": "gpu"}``."""
    labels: dict[str, str] = {}
    for key, value in _pairs(option, text):
        if key in labels:
            raise ShapeError(f"{option}: {key} is given twice")
        labels[key] = value
    return labels


def node_names(prefix: str, count: int) -> list[str]:
    """``sim-01 .. sim-12``: zero-padded so that names sort in creation order (and tables read well)."""
    if count < 1:
        raise ShapeError(f"--count: at least 1 node, got {count}")
    width = max(2, len(str(count)))
    names = [f"{prefix}-{index:0{width}d}" for index in range(1, count + 1)]
    problem = dns_name_problem(names[-1], DNS_NAME_MAX)
    if problem:
        raise ShapeError(f'--name-prefix: "{names[-1]}": {problem}')
    return names
