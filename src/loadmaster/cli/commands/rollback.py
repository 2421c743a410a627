"""``loadmaster rollback DEPLOYMENT``: roll a deployment back to its previous revision.

The server applies the previous revision's spec again as a new revision; services with more than one
replica then roll to it step by step (``loadmaster status -w`` and ``describe deployment`` show the
steps). A deployment with no previous revision is refused, naming ``previous_revision``.
"""

from __future__ import annotations

from typing import Annotated

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
from loadmaster.cli.remote.object_paths import object_path
from loadmaster.manifests import DEPLOYMENT


@reports_failures
def rollback_command(
    deployment: Annotated[str, typer.Argument(help="The deployment's name.")],
    server: ServerOption = DEFAULT_SERVER,
    token: TokenOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Apply a deployment's previous revision again (as a new revision, rolled out step by step)."""
    with connect(server, token, data_dir) as api:
        result = api.post(f"{object_path(DEPLOYMENT, deployment)}/rollback")
    typer.echo(str(result.get("message", f"deployments/{deployment} rolled back")))


def register(app: typer.Typer) -> None:
    app.command("rollback")(rollback_command)
