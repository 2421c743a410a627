"""``loadmaster node remove NODE [--wait]``: graceful removal (drain) of a node.

The server cordons the node, starts a replacement for each of its replicas (the old one keeps running
until its replacement runs), drops its global replicas, and deletes the node once everything has
moved. ``--wait`` follows it with a progress bar (replicas moved of total) until the node is gone
(exit 0) or the drain timed out (exit 1, naming the replicas that did not move).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from loadmaster.cli.failures import reports_failures
from loadmaster.cli.remote.client import DEFAULT_SERVER, ApiClient, CommandError
from loadmaster.cli.remote.connection import (
    DEFAULT_DATA_DIR,
    DataDirOption,
    ServerOption,
    TokenOption,
    connect,
)
from loadmaster.cli.remote.object_paths import object_path
from loadmaster.manifests import NODE

POLL_S = 0.5  # how often --wait reads the node: a drain takes seconds to minutes

node_app = typer.Typer(help="Node lifecycle: graceful removal.", no_args_is_help=True)


@dataclass(frozen=True, slots=True)
class DrainProgress:
    state: str  # draining | timed_out | removed
    total: int
    not_moved: tuple[str, ...]  # of the replicas to move, those still on the node

    @property
    def moved(self) -> int:
        return self.total - len(self.not_moved)


def drain_progress(node: Mapping[str, Any] | None, on_node: Sequence[Mapping[str, Any]]) -> DrainProgress:
    """Where a drain stands: ``node`` as the server holds it (None: deleted) and the replicas whose node
    it is."""
    drain = (node.get("status") or {}).get("drain") if node is not None else None
    if not drain:  # deleted; or deleted and registered again by its agent since: the drain completed
        return DrainProgress("removed", 0, ())
    wanted = list(drain.get("replicas") or [])
    still = {(r.get("metadata") or {}).get("name") for r in on_node}
    if drain.get("state") == "timed_out":
        return DrainProgress("timed_out", len(wanted), tuple(drain.get("not_moved") or ()))
    return DrainProgress(
        str(drain.get("state", "draining")), len(wanted), tuple(n for n in wanted if n in still)
    )


def _read(api: ApiClient, node: str) -> DrainProgress:
    """The drain as the server holds it; the node may be deleted between the two reads."""
    try:
        obj = api.get(object_path(NODE, node))
        on_node = api.get(f"{object_path(NODE, node)}/replicas").get("items", [])
    except CommandError as error:
        if f"nodes/{node} not found" in error.message:  # the drain completed: the node is deleted
            return drain_progress(None, [])
        raise
    return drain_progress(obj, on_node)


def _follow(api: ApiClient, node: str, total: int) -> DrainProgress:
    columns = (TextColumn(f"draining {node}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, transient=False) as bar:
        task = bar.add_task("moved", total=total)
        while True:
            progress = _read(api, node)
            if progress.state == "removed":
                bar.update(task, completed=total)
                return progress
            bar.update(task, completed=progress.moved)
            if progress.state == "timed_out":
                return progress
            time.sleep(POLL_S)


@node_app.command("remove")
@reports_failures
def remove_command(
    node: Annotated[str, typer.Argument(help="The node's name.")],
    wait: Annotated[bool, typer.Option("--wait", help="follow the drain until it ends")] = False,
    server: ServerOption = DEFAULT_SERVER,
    token: TokenOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Remove a node gracefully: move its replicas (make-before-break), then delete it."""
    with connect(server, token, data_dir) as api:
        started = api.post(f"{object_path(NODE, node)}/remove")
        drain = (started.get("status") or {}).get("drain") or {}
        total = len(drain.get("replicas") or [])
        typer.echo(f"nodes/{node} draining: {total} replica(s) to move by {drain.get('deadline')}")
        if not wait:
            return
        progress = _follow(api, node, total)
    if progress.state == "timed_out":
        names = ", ".join(progress.not_moved)
        raise CommandError(f"drain of nodes/{node} timed out; not moved: {names} (the node stays cordoned)")
    typer.echo(f"nodes/{node} removed: {total} of {total} replica(s) moved")


def register(app: typer.Typer) -> None:
    app.add_typer(node_app, name="node")
