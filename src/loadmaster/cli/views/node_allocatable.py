"""``describe node``'s two capacity figures: the allocatable every task sees, and what work that opted
in to overcommit sees (``allocatable x factor`` per resource, ``core/overcommit.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadmaster.core.overcommit import overcommitted_amount
from loadmaster.core.resources import format_quantity
from loadmaster.manifests.model.node_model import allocatable_of


def _figures(amounts: Mapping[str, int]) -> str:
    return (
        ", ".join(f"{name} {format_quantity(name, amount)}" for name, amount in sorted(amounts.items()))
        or "-"
    )


def allocatable_figures(spec: Mapping[str, Any], status: Mapping[str, Any]) -> tuple[str, str | None]:
    """(allocatable, allocatable with overcommit) as ``cpu 7, memory 30Gi``; the second is None when the
    node declares no factor above 1."""
    allocatable = allocatable_of(spec, status)
    factors = {name: float(factor) for name, factor in (spec.get("overcommit") or {}).items()}
    if not any(factor > 1 for factor in factors.values()):
        return _figures(allocatable), None
    stretched = {
        name: overcommitted_amount(amount, factors.get(name, 1.0)) for name, amount in allocatable.items()
    }
    shown = ", ".join(
        f"{name} {format_quantity(name, amount)}"
        + (f" (x{factors[name]:g})" if factors.get(name, 1) > 1 else "")
        for name, amount in sorted(stretched.items())
    )
    return _figures(allocatable), shown
