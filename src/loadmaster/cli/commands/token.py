"""``loadmaster token create --role admin|user|agent [--node N | --any-node]``: a new bearer token (the
server shows it once).

An agent token is bound to the node it serves (``--node N``): it may register, heartbeat and report for
that node and its replicas only, so a leaked agent token cannot rewrite the rest of the cluster. An
agent token for every node needs ``--any-node``, said out loud (docs/decisions.md).
"""

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
    node: Annotated[
        str | None, typer.Option("--node", help="agent only: the one node this token acts for")
    ] = None,
    any_node: Annotated[
        bool, typer.Option("--any-node", help="agent only: act for every node (not bound; avoid)")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the token.")] = False,
    server: ServerOption = DEFAULT_SERVER,
    token: TokenOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Create a token with a role. It is shown once: the server keeps only its SHA-256 hash."""
    if role is not Role.AGENT and (node is not None or any_node):
        raise typer.BadParameter("only an agent token is bound to a node", param_hint="--node")
    if role is Role.AGENT and (node is None) == (not any_node):
        raise typer.BadParameter(
            "an agent token needs --node NODE (the node it serves) or --any-node", param_hint="--node"
        )
    body = {"role": role.value, **({"node": node} if node is not None else {})}
    with connect(server, token, data_dir) as api:
        created = api.post("/api/tokens", json=body)
    typer.echo(created["token"])
    if not quiet:
        bound = f", bound to nodes/{created['node']}" if created.get("node") else ""
        typer.echo(f"role: {created.get('role', role.value)}{bound} (shown once: store it now)", err=True)


def register(app: typer.Typer) -> None:
    app.add_typer(token_app, name="token")
