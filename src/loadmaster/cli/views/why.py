"""A replica's explanation (``GET /api/replicas/{name}/why``) as text a person reads top to bottom:
where it stands, why not elsewhere (counts per category, then every node's reason), what would help,
and when the scheduler tries again."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from loadmaster.cli.views.age import age, format_seconds
from loadmaster.cli.views.node_loss import node_loss_view
from loadmaster.cli.views.preview import candidates_table
from loadmaster.manifests.timestamps import parse_timestamp


def _headline(why: Mapping[str, Any]) -> Text:
    replica, phase, node = why.get("replica", "?"), why.get("phase", "?"), why.get("node_ref")
    line = Text.assemble(("replica ", ""), (str(replica), "bold"), f" is {phase}")
    if node:
        line.append(f" on node {node}")
    return line


def _next_attempt(when: object, now: datetime) -> str:
    if not when:
        return "at the next cycle"
    try:
        moment = parse_timestamp(when)
    except ValueError:
        return str(when)
    wait = (moment - now).total_seconds()
    return f"at {when} (in {format_seconds(wait)})" if wait > 0 else f"at {when} (due now)"


def _summary_table(summary: Mapping[str, Any]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    table.add_column("WHY NOT", no_wrap=True)
    table.add_column("NODES", justify="right")
    for category, count in sorted(summary.items(), key=lambda item: (-int(item[1]), item[0])):
        table.add_row(str(category), str(count))
    return table


def _nodes_table(nodes: Mapping[str, Any]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    table.add_column("NODE", no_wrap=True)
    table.add_column("REASON")
    for node, reason in sorted(nodes.items()):
        table.add_row(str(node), str(reason))
    return table


def _placement_parts(placement: Mapping[str, Any]) -> list[RenderableType]:
    """Why it is on its node: that node's scores against the runner-up's, and the margin."""
    node, mine, runner_up = placement.get("node"), placement.get("scores"), placement.get("runner_up")
    parts: list[RenderableType] = [Text(f"\nwhy {node} (ranked as the cluster is now):", style="bold")]
    if placement.get("note"):
        parts.append(Text(f"  {placement['note']}"))
    shown = [candidate for candidate in (mine, runner_up) if candidate]
    if not shown:
        return parts
    if mine and runner_up:
        if "margin" in placement:
            parts.append(
                Text(
                    f"  {node} scores {mine['total']} of 100, {runner_up['node']} (the runner-up) "
                    f"{runner_up['total']}: a margin of {placement['margin']}"
                )
            )
        else:
            parts.append(Text(f"  {node} ranks {mine['total']}, {runner_up['node']} {runner_up['total']}"))
    elif mine:
        parts.append(Text(f"  {node} is the only node that can take it"))
    parts.append(candidates_table(shown, len(shown)))
    return parts


def explanation_view(why: Mapping[str, Any], now: datetime) -> RenderableType:
    """Every part of the explanation; parts the server left out are not shown (none is made up)."""
    parts: list[RenderableType] = [_headline(why)]
    if why.get("reason"):
        parts.append(Text(f"reason: {why['reason']}"))
    if why.get("message"):
        parts.append(Text(f"message: {why['message']}"))
    if (why.get("sticky") or {}).get("message"):
        parts.append(Text(f"stickiness: {why['sticky']['message']}"))
    summary = why.get("summary") or {}
    nodes = why.get("nodes") or {}
    if summary:
        total = sum(int(count) for count in summary.values())
        parts.append(Text(f"\nnodes that cannot take it ({total}), by first reason:", style="bold"))
        parts.append(_summary_table(summary))
    if nodes:
        parts.append(Text("\nevery node's reasons:", style="bold"))
        parts.append(_nodes_table(nodes))
    if why.get("placement"):
        parts.extend(_placement_parts(why["placement"]))
    hints = why.get("hints") or []
    if hints:
        parts.append(Text("\nwhat would help:", style="bold"))
        parts.extend(Text(f"  - {hint}") for hint in hints)
    scale_up = why.get("scale_up") or {}
    if scale_up.get("verdict") and scale_up["verdict"] != "fits_now":
        parts.append(Text(f"\nscale-up: {scale_up.get('message', scale_up['verdict'])}"))
    if "attempts" in why or "next_attempt_at" in why:
        attempts = f"attempts: {why.get('attempts', 0)}"
        if why.get("last_attempt_at"):
            attempts += f" (last {age(why['last_attempt_at'], now)} ago)"
        next_line = _next_attempt(why.get("next_attempt_at"), now) if not why.get("node_ref") else "-"
        parts.append(Text(f"\n{attempts}; next attempt: {next_line}"))
    if why.get("node_loss"):
        parts += [Text("\nnode loss:", style="bold"), node_loss_view(why["node_loss"], now)]
    return Group(*parts)
