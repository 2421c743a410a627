"""``loadmaster describe <kind> NAME``: one object in full, readable, with what relates to it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import typer

from loadmaster.cli.commands.get import list_objects
from loadmaster.cli.failures import reports_failures
from loadmaster.cli.remote.client import DEFAULT_SERVER, ApiClient
from loadmaster.cli.remote.connection import (
    DEFAULT_DATA_DIR,
    DataDirOption,
    ServerOption,
    TokenOption,
    connect,
)
from loadmaster.cli.remote.object_paths import KindArgument, NameArgument, kind_argument, object_path
from loadmaster.cli.views.columns import name_of, spec_of
from loadmaster.cli.views.describe import describe_view
from loadmaster.cli.views.node_loss import node_loss_view
from loadmaster.cli.views.output import console
from loadmaster.cli.views.queue_state import fairness_section
from loadmaster.cli.views.usage import replica_node
from loadmaster.cli.views.why import explanation_view
from loadmaster.manifests import DEPLOYMENT, JOB, NODE, QUEUE, REPLICA


def related_replicas(api: ApiClient, kind: str, obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The replicas on a node, or owned by a Deployment or Job (none for other kinds)."""
    if kind not in (NODE, DEPLOYMENT, JOB):
        return []
    name = name_of(obj)
    replicas = list_objects(api, REPLICA)
    if kind == NODE:
        return [r for r in replicas if replica_node(r) == name]
    return [r for r in replicas if spec_of(r).get("owner_kind") == kind and spec_of(r).get("owner") == name]


@reports_failures
def describe_command(
    kind: KindArgument,
    name: NameArgument,
    server: ServerOption = DEFAULT_SERVER,
    token: TokenOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Show one object readably: spec, status, conditions, related replicas, and a replica's explanation."""
    canonical = kind_argument(kind)
    now = datetime.now(UTC)
    with connect(server, token, data_dir) as api:
        path = object_path(canonical, name)
        obj = api.get(path)
        related = related_replicas(api, canonical, obj)
        explanation = explanation_view(api.get(f"{path}/why"), now) if canonical == REPLICA else None
        loss = api.get(f"{path}/node-loss").get("node_loss") if canonical == NODE else None
        fairness = fairness_section(name, api.lm.queue_state()) if canonical == QUEUE else None
    node_loss = node_loss_view(loss, now) if loss else None
    console().print(describe_view(obj, now, related, explanation, node_loss))
    if fairness is not None:
        console().print(fairness)


def register(app: typer.Typer) -> None:
    app.command("describe")(describe_command)
