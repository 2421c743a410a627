"""``loadmaster cordon NODE`` / ``uncordon NODE``: stop or resume placing new replicas on a node.

Cordoning moves nothing: replicas already on the node stay until they end or are drained.
"""

from __future__ import annotations

from pathlib import Path
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
from loadmaster.manifests import NODE

NodeArgument = Annotated[str, typer.Argument(help="The node's name.")]


def _set_cordon(node: str, cordoned: bool, server: str, token: str | None, data_dir: Path) -> None:
    verb = "cordon" if cordoned else "uncordon"
    with connect(server, token, data_dir) as api:
        result = api.post(f"{object_path(NODE, node)}/{verb}")
    state = "cordoned" if (result.get("spec") or {}).get("unschedulable") else "schedulable"
    typer.echo(f"nodes/{node} {state}")


@reports_failures
def cordon_command(
    node: NodeArgument,
    server: ServerOption = DEFAULT_SERVER,
    token: TokenOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Mark a node unschedulable: nothing new is placed on it; what runs there stays."""
    _set_cordon(node, True, server, token, data_dir)


@reports_failures
def uncordon_command(
    node: NodeArgument,
    server: ServerOption = DEFAULT_SERVER,
    token: TokenOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Mark a node schedulable again."""
    _set_cordon(node, False, server, token, data_dir)


def register(app: typer.Typer) -> None:
    app.command("cordon")(cordon_command)
    app.command("uncordon")(uncordon_command)
