"""``loadmaster delete <kind> NAME``: remove an object (a Deployment's or Job's replicas go Terminating)."""

from __future__ import annotations

import typer

from loadmaster.cli.failures import reports_failures
from loadmaster.cli.remote.client import DEFAULT_SERVER
from loadmaster.cli.remote.connection import (
    DEFAULT_DATA_DIR,
    DataDirOption,
    ServerOption,
    TokenOption,
    connect,
)
from loadmaster.cli.remote.object_paths import KindArgument, NameArgument, kind_argument, object_path
from loadmaster.manifests import object_ref


@reports_failures
def delete_command(
    kind: KindArgument,
    name: NameArgument,
    server: ServerOption = DEFAULT_SERVER,
    token: TokenOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Delete one object. Deleting a Deployment or a Job stops its replicas."""
    canonical = kind_argument(kind)
    with connect(server, token, data_dir) as api:
        api.delete(object_path(canonical, name))
    typer.echo(f"{object_ref(canonical, name)} deleted")


def register(app: typer.Typer) -> None:
    app.command("delete")(delete_command)
