"""Overcommit factors: how far past its allocatable a node lets opted-in work go (B8, conflict (b) 2).

A node declares ``overcommit: {cpu: 1.5, memory: 1.0}``: each factor is a number >= 1 (1 = no
overcommit) for cpu or memory. GPUs are devices that one task holds whole (or a share of one device),
and other resources are counted things (ports, addresses): neither can be promised twice, so only cpu
and memory take a factor. The scenario reader and the manifest validator both ask these questions.
"""

from __future__ import annotations

import math

from loadmaster.core.limits import short_text
from loadmaster.core.resources import CPU, MEMORY

OVERCOMMIT_RESOURCES = (CPU, MEMORY)
# A factor above this is surely a typo (150 for 1.5); it also keeps allocatable x factor within int64.
MAX_OVERCOMMIT_FACTOR = 100


def overcommit_resource_problem(resource: object) -> str | None:
    """Why ``resource`` cannot take an overcommit factor, or None."""
    if resource in OVERCOMMIT_RESOURCES:
        return None
    return (
        f"unknown resource {short_text(resource)}: overcommit applies to {' and '.join(OVERCOMMIT_RESOURCES)}"
    )


def overcommit_factor_problem(value: object) -> str | None:
    """Why ``value`` is not an overcommit factor (a number from 1 to ``MAX_OVERCOMMIT_FACTOR``), or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"bad factor {short_text(value)}: expected a number >= 1 (1.5 = 50% past allocatable)"
    if not math.isfinite(value) or value < 1:
        return f"bad factor {short_text(value)}: must be >= 1 (1 = no overcommit)"
    if value > MAX_OVERCOMMIT_FACTOR:
        return f"bad factor {short_text(value)}: must be at most {MAX_OVERCOMMIT_FACTOR}"
    return None
