"""``loadmaster delete KIND NAME`` or ``delete -f FILE|DIR|-``: remove objects (a Deployment's or Job's
replicas go Terminating).

With ``-f`` every object the files describe is deleted, last document first (workloads before the
queues they name, the reverse of the order ``apply`` creates them in); one that cannot be deleted is
reported and the rest are still deleted, then the command exits 1.
"""

from __future__ import annotations

from typing import Annotated

import typer

from loadmaster.cli.failures import reports_failures
from loadmaster.cli.manifest_files import read_sources, validate_sources
from loadmaster.cli.remote.client import DEFAULT_SERVER, EXIT_BAD_INPUT, CommandError
from loadmaster.cli.remote.connection import (
    DEFAULT_DATA_DIR,
    DataDirOption,
    ServerOption,
    TokenOption,
    connect,
)
from loadmaster.cli.remote.object_paths import kind_argument, object_path
from loadmaster.manifests import object_ref


@reports_failures
def delete_command(
    kind: Annotated[str | None, typer.Argument(help="The kind (singular, plural or lowercase).")] = None,
    name: Annotated[str | None, typer.Argument(help="The object's name.")] = None,
    filename: Annotated[
        list[str] | None,
        typer.Option("--filename", "-f", help="Delete the objects in these files (as apply -f); repeatable."),
    ] = None,
    server: ServerOption = DEFAULT_SERVER,
    token: TokenOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Delete one object, or every object in files. Deleting a Deployment or a Job stops its replicas."""
    if filename and (kind or name):
        raise CommandError("give KIND NAME or -f FILE, not both", EXIT_BAD_INPUT)
    if filename:
        targets = [(m.kind, m.name) for m in reversed(validate_sources(read_sources(filename)))]
    elif kind and name:
        targets = [(kind_argument(kind), name)]
    else:
        raise CommandError("give KIND NAME (delete deployment shop) or -f FILE", EXIT_BAD_INPUT)
    failed = 0
    with connect(server, token, data_dir) as api:
        for target_kind, target_name in targets:
            try:
                api.delete(object_path(target_kind, target_name))
            except CommandError as error:
                if len(targets) == 1:
                    raise
                failed += 1
                typer.echo(f"error: {object_ref(target_kind, target_name)}: {error.message}", err=True)
                continue
            typer.echo(f"{object_ref(target_kind, target_name)} deleted")
    if failed:
        raise CommandError(f"{failed} of {len(targets)} object(s) could not be deleted")


def register(app: typer.Typer) -> None:
    app.command("delete")(delete_command)
