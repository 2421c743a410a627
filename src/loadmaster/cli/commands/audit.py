"""``loadmaster audit [-f] [--type T[,T]]``: what the control plane did and refused to do, oldest first.

``-f`` keeps following (server-sent events) until Ctrl-C, e.g. ``loadmaster audit -f --type
rebalance_moved,rebalance_skipped`` to tail the rebalancer (H7).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from loadmaster.cli.failures import reports_failures
from loadmaster.cli.remote.client import DEFAULT_SERVER
from loadmaster.cli.remote.connection import (
    DEFAULT_DATA_DIR,
    DataDirOption,
    ServerOption,
    TokenOption,
    connect,
)
from loadmaster.cli.views.columns import key_values
from loadmaster.cli.views.output import OutputFormat, OutputOption, console, print_data

AUDIT_COLUMNS = ("SEQ", "TIME", "TYPE", "ACTOR", "OBJECT", "MESSAGE")


def entry_cells(entry: Mapping[str, Any], wide: bool) -> list[str]:
    cells = [str(entry.get(key, "-") or "-") for key in ("seq", "time", "type", "actor", "object", "message")]
    if wide:
        cells.append(key_values(entry.get("details")))
    return cells


def entry_line(entry: Mapping[str, Any], wide: bool = False) -> str:
    """One followed entry as one line (a table cannot grow while it is printed)."""
    seq, time, kind, actor, obj, message, *details = entry_cells(entry, wide)
    line = f"{seq:>6}  {time}  {kind:<18} {actor:<10} {obj:<32} {message}"
    return f"{line}  {details[0]}" if details else line


def audit_table(entries: Sequence[Mapping[str, Any]], wide: bool) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    for header in (*AUDIT_COLUMNS, *(("DETAILS",) if wide else ())):
        table.add_column(header, no_wrap=header not in ("MESSAGE", "DETAILS"))
    for entry in entries:
        table.add_row(*entry_cells(entry, wide))
    return table


def _items(body: Any) -> list[dict[str, Any]]:
    items = body.get("items", []) if isinstance(body, dict) else body
    return [item for item in items if isinstance(item, dict)]


@reports_failures
def audit_command(
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new entries until Ctrl-C.")
    ] = False,
    types: Annotated[
        str | None,
        typer.Option("--type", help="Only these entry types, comma-separated (e.g. schedule,evict)."),
    ] = None,
    since: Annotated[
        int | None, typer.Option("--since", min=0, help="Only entries after this sequence number.")
    ] = None,
    output: OutputOption = OutputFormat.TABLE,
    server: ServerOption = DEFAULT_SERVER,
    token: TokenOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Show the audit log: decisions, evictions, scale-ups, applies, deletions, leadership changes."""
    params: dict[str, str] = {}
    if types:
        params["type"] = ",".join(part.strip() for part in types.split(",") if part.strip())
    if since is not None:
        params["since"] = str(since)
    wide = output is OutputFormat.WIDE
    with connect(server, token, data_dir) as api:
        if not follow:
            entries = _items(api.get("/api/audit", params=params))
            if not print_data({"items": entries}, output):
                console().print(audit_table(entries, wide))
            return
        try:
            for event in api.events("/api/audit", params={**params, "follow": "true"}):
                entry = event.json()
                if output in (OutputFormat.JSON, OutputFormat.YAML):
                    typer.echo(json.dumps(entry))
                else:
                    typer.echo(entry_line(entry, wide))
        except KeyboardInterrupt:
            return


def register(app: typer.Typer) -> None:
    app.command("audit")(audit_command)
