"""Rendering rich output to plain text, and small object builders, for the CLI view tests."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console, RenderableType


def render(renderable: RenderableType, width: int = 200) -> str:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None, highlight=False).print(renderable)
    return out.getvalue()


def rows(text: str) -> list[list[str]]:
    """A rendered table's lines split into cells (cells hold no spaces in these tests)."""
    return [
        line.split() for line in text.splitlines() if line.strip() and not set(line.strip()) <= {"─", " "}
    ]


def node(
    name: str, capacity: dict[str, Any], state: str = "Ready", unschedulable: bool = False
) -> dict[str, Any]:
    return {
        "kind": "Node",
        "metadata": {"name": name, "created_at": "2026-11-21T10:00:00Z"},
        "spec": {"capacity": capacity, "unschedulable": unschedulable},
        "status": {"state": state, "last_heartbeat": "2026-11-21T10:59:50Z"},
    }


def replica(
    name: str, phase: str, node_ref: str | None = None, resources: dict[str, Any] | None = None, **spec: Any
) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase}
    if node_ref:
        status["node_ref"] = node_ref
    return {
        "kind": "Replica",
        "metadata": {"name": name, "created_at": "2026-11-21T10:59:00Z"},
        "spec": {
            "owner_kind": "Deployment",
            "owner": "shop",
            "service": "api",
            "resources": resources or {},
            **spec,
        },
        "status": status,
    }
