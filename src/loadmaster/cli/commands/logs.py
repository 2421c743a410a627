"""``loadmaster logs REPLICA [-f] [--tail N]``: a replica's output, which the server asks its agent for."""

from __future__ import annotations

import sys
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


@reports_failures
def logs_command(
    replica: Annotated[str, typer.Argument(help="The replica, e.g. shop-api-0.")],
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new output until Ctrl-C.")
    ] = False,
    tail: Annotated[int | None, typer.Option("--tail", min=0, help="Only the last N lines.")] = None,
    server: ServerOption = DEFAULT_SERVER,
    token: TokenOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Print a replica's stdout and stderr (from the node agent that runs it)."""
    params = {"follow": "true" if follow else "false"}
    if tail is not None:
        params["tail"] = str(tail)
    with connect(server, token, data_dir) as api:
        try:
            for text in api.text_stream(f"/api/replicas/{replica}/logs", params=params):
                sys.stdout.write(text)
                sys.stdout.flush()
        except KeyboardInterrupt:
            return


def register(app: typer.Typer) -> None:
    app.command("logs")(logs_command)
