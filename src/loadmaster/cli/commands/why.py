"""``loadmaster why REPLICA``: the full explanation of where a replica is, or why it is nowhere yet."""

from __future__ import annotations

from datetime import UTC, datetime
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
from loadmaster.cli.views.output import OutputFormat, OutputOption, console, print_data
from loadmaster.cli.views.why import explanation_view
from loadmaster.manifests import REPLICA


@reports_failures
def why_command(
    replica: Annotated[str, typer.Argument(help="The replica's name (see `loadmaster get replicas`).")],
    output: OutputOption = OutputFormat.TABLE,
    server: ServerOption = DEFAULT_SERVER,
    token: TokenOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Explain a replica: counts per rejection category, every node's reason, hints, attempts and backoff."""
    with connect(server, token, data_dir) as api:
        why = api.get(f"{object_path(REPLICA, replica)}/why")
    if not print_data(why, output):
        console().print(explanation_view(why, datetime.now(UTC)))


def register(app: typer.Typer) -> None:
    app.command("why")(why_command)
