"""The ``status`` screen: leader, nodes ready/total, replicas by phase, pending replicas with their
reasons, and the latest decisions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from loadmaster.cli.views.columns import name_of
from loadmaster.cli.views.kind_columns import latest_phase_condition
from loadmaster.cli.views.rollout import rollout_line
from loadmaster.cli.views.status_state import ClusterStatus

PENDING_SHOWN = 10


def leader_line(info: Mapping[str, Any]) -> str:
    """``leader: server-a (this server)``; the info body's shape is the server's, so read it leniently."""
    leader = info.get("leader")
    if isinstance(leader, Mapping):
        name = leader.get("leader") or "none"
        mine = " (this server)" if leader.get("is_leader") else ""
        return f"leader: {name}{mine}"
    if leader:
        return f"leader: {leader}"
    return "leader: unknown"


def _table(*headers: str) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    for header in headers:
        table.add_column(header, no_wrap=header != "MESSAGE")
    return table


def status_view(status: ClusterStatus) -> RenderableType:
    info = status.info
    store = info.get("store") or info.get("store_backend") or "?"
    parts: list[RenderableType] = [
        Text.assemble(("loadmaster ", "bold"), status.server, f"  {leader_line(info)}  store: {store}"),
        Text(
            f"nodes: {status.ready_nodes()}/{len(status.nodes)} ready"
            + (f", {status.cordoned_nodes()} cordoned" if status.cordoned_nodes() else "")
        ),
    ]
    scheduler = info.get("stats") or {}
    if "cycles" in scheduler:
        line = f"scheduler: {scheduler['cycles']} cycles, backoffs {scheduler.get('backoffs', 0)}"
        if scheduler.get("last_error"):
            line += f"; last error: {scheduler['last_error']}"
        parts.append(Text(line))
    phases = ", ".join(f"{phase} {count}" for phase, count in status.phases()) or "none"
    parts.append(Text(f"replicas: {len(status.replicas)} ({phases})"))
    pending = status.pending()
    if pending:
        table = _table("PENDING", "REASON", "MESSAGE")
        for replica in pending[:PENDING_SHOWN]:
            condition = latest_phase_condition(replica)
            table.add_row(
                name_of(replica), str(condition.get("reason", "-")), str(condition.get("message", ""))
            )
        parts.append(table)
        if len(pending) > PENDING_SHOWN:
            parts.append(Text(f"... and {len(pending) - PENDING_SHOWN} more (loadmaster get replicas)"))
    rollouts = status.rollouts()
    if rollouts:
        table = _table("DEPLOYMENT", "ROLLOUT")
        for name, rollout in rollouts:
            table.add_row(name, rollout_line(rollout))
        parts.append(table)
    if status.recent:
        table = _table("SEQ", "TYPE", "OBJECT", "MESSAGE")
        for entry in status.recent:
            table.add_row(
                str(entry.get("seq", "")),
                str(entry.get("type", "")),
                str(entry.get("object", "")),
                str(entry.get("message", "")),
            )
        parts += [Text("recent decisions:", style="bold"), table]
    return Group(*parts)
