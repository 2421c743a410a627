"""``loadmaster get <kind> [NAME]``: list or show objects as a table, or as YAML/JSON for scripts."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from loadmaster.cli.failures import reports_failures
from loadmaster.cli.remote.client import DEFAULT_SERVER, ApiClient
from loadmaster.cli.remote.connection import (
    DEFAULT_DATA_DIR,
    DataDirOption,
    ServerOption,
    TokenOption,
    connect,
)
from loadmaster.cli.remote.object_paths import kind_argument, object_path
from loadmaster.cli.views.columns import TableContext, build_table, name_of
from loadmaster.cli.views.gpu_fragmentation import gpu_fragmentation_by_node
from loadmaster.cli.views.kind_columns import COLUMNS_BY_KIND, NEEDS_REPLICAS
from loadmaster.cli.views.output import ListFormat, ListOutputOption, NoHeadersOption, console, print_data
from loadmaster.cli.views.usage import used_by_node
from loadmaster.manifests import NODE, QUEUE, REPLICA, object_ref, plural_of


def list_objects(api: ApiClient, kind: str, selector: str | None = None) -> list[dict[str, Any]]:
    return api.lm.list_objects(plural_of(kind), selector)


def table_context(
    api: ApiClient, kind: str, objects: list[dict[str, Any]], wide: bool = False
) -> TableContext:
    """The replicas (and per-node usage, and with ``wide`` the nodes' GPU fragmentation) the kind's
    columns need, fetched and computed once for the whole table."""
    if kind == REPLICA:
        replicas = objects
    elif kind in NEEDS_REPLICAS:
        replicas = list_objects(api, REPLICA)
    else:
        replicas = []
    now = datetime.now(UTC)
    used = used_by_node(replicas) if kind == NODE else {}
    gpu = gpu_fragmentation_by_node(objects, replicas, now) if kind == NODE and wide else {}
    queue_state = dict(api.lm.queue_state()["queues"]) if kind == QUEUE else {}
    return TableContext(now=now, replicas=replicas, used=used, gpu=gpu, queue_state=queue_state)


@reports_failures
def get_command(
    kind: Annotated[
        str, typer.Argument(help="nodes, queues, deployments, jobs, workertemplates or replicas.")
    ],
    name: Annotated[str | None, typer.Argument(help="One object's name (default: all of the kind).")] = None,
    output: ListOutputOption = ListFormat.TABLE,
    no_headers: NoHeadersOption = False,
    selector: Annotated[
        str | None,
        typer.Option(
            "--selector",
            "-l",
            help="Label selector, as kubectl: k=v, k!=v, 'k in (a,b)', 'k notin (a,b)', k, '!k'; "
            "commas join.",
        ),
    ] = None,
    server: ServerOption = DEFAULT_SERVER,
    token: TokenOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Show objects. -o json prints {"items": [...]} (one object when NAME is given)."""
    canonical = kind_argument(kind)
    with connect(server, token, data_dir) as api:
        if name is not None:
            objects = [api.get(object_path(canonical, name))]
        else:
            objects = list_objects(api, canonical, selector)
        if print_data(objects[0] if name is not None else {"items": objects}, output):
            return
        if output is ListFormat.NAME:
            for obj in objects:
                typer.echo(object_ref(canonical, name_of(obj)))
            return
        if not objects:
            typer.echo(f"no {plural_of(canonical)} found", err=True)
            return
        wide = output is ListFormat.WIDE
        context = table_context(api, canonical, objects, wide)
    table = build_table(COLUMNS_BY_KIND[canonical], objects, context, wide=wide, headers=not no_headers)
    console().print(table)


def register(app: typer.Typer) -> None:
    app.command("get")(get_command)
