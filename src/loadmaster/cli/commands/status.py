"""``loadmaster status [-w]``: the cluster at a glance; ``-w`` keeps it live from the watch stream.

With ``-w`` a reader thread follows ``GET /api/watch?kinds=replicas,nodes,deployments`` into a queue and
the main thread applies the events and redraws at most every ``REDRAW_S``, so a burst of thousands of events
costs a few redraws, not thousands. The server info and the newest audit entries are re-read every
``INFO_EVERY_S``. A ``relist`` event (the server compacted past our revision) reloads both lists.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Annotated, Any

import typer
from rich.live import Live

from loadmaster.cli.failures import reports_failures
from loadmaster.cli.remote.client import DEFAULT_SERVER, ApiClient, CommandError
from loadmaster.cli.remote.connection import (
    DEFAULT_DATA_DIR,
    DataDirOption,
    ServerOption,
    TokenOption,
    connect,
)
from loadmaster.cli.views.output import console
from loadmaster.cli.views.status import status_view
from loadmaster.cli.views.status_state import RECENT_ENTRIES, ClusterStatus

REDRAW_S = 0.25
INFO_EVERY_S = 5.0
_STREAM_ENDED = object()


def load(api: ApiClient, status: ClusterStatus) -> None:
    """Everything ``status`` shows, read afresh."""
    status.info = api.get("/api/info")
    nodes = api.get("/api/nodes")
    replicas = api.get("/api/replicas")
    # Watch from the older of the two list revisions: a change in between is then seen twice, never missed.
    revision = min(int(nodes.get("revision", 0)), int(replicas.get("revision", 0)))
    status.relist(nodes.get("items", []), replicas.get("items", []), revision)
    deployments = api.get("/api/deployments")
    status.deployments = {str((d.get("metadata") or {}).get("name")): d for d in deployments.get("items", [])}
    refresh_recent(api, status)


def refresh_recent(api: ApiClient, status: ClusterStatus) -> None:
    params = {"since": str(status.last_seq)} if status.last_seq is not None else {}
    body = api.get("/api/audit", params=params)
    entries = body.get("items", []) if isinstance(body, dict) else body
    status.add_entries(entries[-RECENT_ENTRIES:])


def _read_stream(api: ApiClient, revision: int, events: queue.Queue[Any]) -> None:
    try:
        for event in api.events(
            "/api/watch", {"kinds": "replicas,nodes,deployments", "from_revision": str(revision)}
        ):
            events.put(event)
    except CommandError as exc:
        events.put(exc)
    events.put(_STREAM_ENDED)


def watch(api: ApiClient, status: ClusterStatus) -> None:
    events: queue.Queue[Any] = queue.Queue()
    threading.Thread(target=_read_stream, args=(api, status.revision, events), daemon=True).start()
    next_info = time.monotonic() + INFO_EVERY_S
    with Live(status_view(status), console=console(fit_terminal=True), auto_refresh=False) as live:
        while True:
            deadline = time.monotonic() + REDRAW_S
            changed = False
            while (left := deadline - time.monotonic()) > 0:
                try:
                    item = events.get(timeout=left)
                except queue.Empty:
                    break
                if isinstance(item, CommandError):
                    raise item
                if item is _STREAM_ENDED:
                    raise CommandError(f"the server at {api.server} closed the watch stream")
                if item.event == "relist":
                    load(api, status)
                else:
                    status.apply_event(item.event, item.json())
                changed = True
            if time.monotonic() >= next_info:
                status.info = api.get("/api/info")
                refresh_recent(api, status)
                next_info, changed = time.monotonic() + INFO_EVERY_S, True
            if changed:
                live.update(status_view(status), refresh=True)


@reports_failures
def status_command(
    watch_changes: Annotated[bool, typer.Option("--watch", "-w", help="Stay live until Ctrl-C.")] = False,
    server: ServerOption = DEFAULT_SERVER,
    token: TokenOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Leader, nodes ready/total, replicas by phase, pending replicas and why, rollouts, recent decisions."""
    with connect(server, token, data_dir) as api:
        status = ClusterStatus(server=api.server)
        load(api, status)
        if not watch_changes:
            console().print(status_view(status))
            return
        try:
            watch(api, status)
        except KeyboardInterrupt:
            return


def register(app: typer.Typer) -> None:
    app.command("status")(status_command)
