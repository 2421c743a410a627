"""A node's node-loss timeline (``GET /api/nodes/{name}/node-loss``, and ``why``'s ``node_loss``) as
lines: each step with its time, then the next action and exactly when it is due."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from loadmaster.cli.views.age import format_seconds
from loadmaster.manifests.timestamps import parse_timestamp

_INDENT = "  "


def _when(at: object, now: datetime) -> str:
    try:
        wait = (parse_timestamp(at) - now).total_seconds()
    except ValueError:
        return str(at)
    return f"{at} (in {format_seconds(wait)})" if wait > 0 else f"{at} (due now)"


def node_loss_view(loss: Mapping[str, Any], now: datetime) -> RenderableType:
    lines: list[RenderableType] = [
        Text(
            f"{_INDENT}node {loss.get('node')}: policy {loss.get('policy')}, probe after "
            f"{loss.get('node_loss_wait_s', 0):g}s, {loss.get('agent_down_wait_s', 0):g}s more if only the "
            "agent is down"
        )
    ]
    lines += [Text(f"{_INDENT}{step.get('at')}  {step.get('what')}") for step in loss.get("steps") or []]
    upcoming = loss.get("next")
    if upcoming:
        lines.append(Text(f"{_INDENT}next: {upcoming.get('what')} at {_when(upcoming.get('at'), now)}"))
    else:
        lines.append(Text(f"{_INDENT}next: nothing (what moved stays where it is when the node returns)"))
    return Group(*lines)
