"""The options every command that talks to a server shares, and how they become an ``ApiClient``.

Precedence: the flag, then the environment variable, then the current context of
``~/.config/loadmaster/config.yaml`` (``remote/contexts.py``), then the default. The token defaults to
the admin token the server wrote into its data dir, so on the machine that runs ``loadmaster server``
(or ``loadmaster up``) the CLI works with no setup. (A ``--server`` equal to the default URL cannot be
told from no flag at all: with a context in force, reach the default server with LOADMASTER_SERVER.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from loadmaster.cli.remote.client import DEFAULT_SERVER, ApiClient, CommandError
from loadmaster.cli.remote.contexts import current_context

SERVER_VARIABLE = "LOADMASTER_SERVER"

DEFAULT_DATA_DIR = Path(".loadmaster")
ADMIN_TOKEN_FILE = "admin-token"

ServerOption = Annotated[
    str,
    typer.Option("--server", envvar=SERVER_VARIABLE, help="URL of the loadmaster server.", show_default=True),
]
TokenOption = Annotated[
    str | None,
    typer.Option(
        "--token",
        envvar="LOADMASTER_TOKEN",
        help="Bearer token (default: the admin token in the data dir).",
        show_default=False,
    ),
]
DataDirOption = Annotated[
    Path,
    typer.Option("--data-dir", help="The server's data dir, where the admin token is read from."),
]


def admin_token_path(data_dir: Path) -> Path:
    return data_dir / ADMIN_TOKEN_FILE


def resolve_token(token: str | None, data_dir: Path) -> str | None:
    """The given token, else the data dir's admin token when it exists, else None (the server says 401)."""
    if token:
        return token.strip()
    path = admin_token_path(data_dir)
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CommandError(f"cannot read the admin token {path}: {exc.strerror}") from None
    return text or None


def connect(
    server: str = DEFAULT_SERVER, token: str | None = None, data_dir: Path = DEFAULT_DATA_DIR
) -> ApiClient:
    context = current_context()
    if context is not None:
        if context.server and server == DEFAULT_SERVER and SERVER_VARIABLE not in os.environ:
            server = context.server
        token = token or context.resolved_token()
    return ApiClient(server, resolve_token(token, data_dir))
