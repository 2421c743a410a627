"""Pressure samples from agents (JACO H1): ``{cpu, memory, at?}`` utilisation, 0..1 each.

The real agent sends one when it registers and every ``node_status_interval`` with its heartbeat
(``pressure`` in the body), or alone (``POST /api/nodes/{name}/status``, which is not a heartbeat: it
says nothing about the agent being alive on time). Either way the sample is stored as
``status.pressure = {cpu, memory, at}`` where ``at`` is the server's clock when it arrived: the clock
that stamps heartbeats and judges a sample's age (an agent's clock may drift; its own ``at`` is checked
and not kept).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.runtime.plane.errors import FieldProblem, InvalidError

SAMPLE_FIELDS = ("cpu", "memory", "at")


def sample_of(value: object, now: datetime, path: str = "pressure") -> dict[str, Any]:
    """The sample to store, or InvalidError naming the body field (``pressure.cpu``)."""
    if not isinstance(value, dict):
        raise InvalidError(
            f"{path}: expected an object {{cpu, memory, at}}", [FieldProblem(path, "expected an object")]
        )
    problems = [
        FieldProblem(f"{path}.{key}", f"unknown field (expected {', '.join(SAMPLE_FIELDS)})")
        for key in value
        if key not in SAMPLE_FIELDS
    ]
    for key in ("cpu", "memory"):
        share = value.get(key)
        if key not in value:
            problems.append(FieldProblem(f"{path}.{key}", "required"))
        elif isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1:
            problems.append(
                FieldProblem(f"{path}.{key}", f"expected a share of the node from 0 to 1, got {share!r}")
            )
    if "at" in value and not isinstance(value["at"], str):
        problems.append(FieldProblem(f"{path}.at", "expected an RFC 3339 timestamp string"))
    if problems:
        raise InvalidError("; ".join(f"{p.path}: {p.message}" for p in problems), problems)
    return {"cpu": value["cpu"], "memory": value["memory"], "at": format_timestamp(now)}
