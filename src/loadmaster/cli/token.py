"""``loadmaster token create --role admin|user|agent``: a new bearer token (the server shows it once)."""

from __future__ import annotations

from enum import StrEnum
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


class Role(StrEnum):
    ADMIN = "admin"
    USER = "user"
    AGENT = "agent"


token_app = typer.Typer(help="Manage API tokens.", no_args_is_help=True)


@token_app.command("create")
@reports_failures
def create_command(
    role: Annotated[
        Role, typer.Option("--role", help="admin (everything), user (workloads) or agent (nodes).")
    ],
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the token.")] = False,
    server: ServerOption = DEFAULT_SERVER,
    token: TokenOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Create a token with a role. It is shown once: the server keeps only its SHA-256 hash."""
    with connect(server, token, data_dir) as api:
        created = api.post("/api/tokens", json={"role": role.value})
    typer.echo(created["token"])
    if not quiet:
        typer.echo(f"role: {created.get('role', role.value)} (shown once: store it now)", err=True)


def register(app: typer.Typer) -> None:
    app.add_typer(token_app, name="token")
