"""``loadmaster config``: named connections (server + token) in ``~/.config/loadmaster/config.yaml``.

    loadmaster config set-context prod --server http://lm.internal:7480 --token-file ~/prod-token
    loadmaster config use-context prod
    loadmaster config get-contexts
    loadmaster config current-context

A command's ``--server`` / ``LOADMASTER_SERVER`` and ``--token`` / ``LOADMASTER_TOKEN`` still win over
the context; the context wins over the defaults (``http://127.0.0.1:7480`` and the data dir's token).
"""

from __future__ import annotations

from typing import Annotated

import typer

from loadmaster.cli.failures import reports_failures
from loadmaster.cli.remote.client import EXIT_BAD_INPUT, CommandError
from loadmaster.cli.remote.contexts import context_named, current_context, read_config, write_config

config_app = typer.Typer(help="Named connections (server + token): set-context, use-context, get-contexts.")


@config_app.command("set-context")
@reports_failures
def set_context(
    name: Annotated[str, typer.Argument(help="The context's name.")],
    server: Annotated[str | None, typer.Option("--server", help="The server's URL.")] = None,
    token: Annotated[str | None, typer.Option("--token", help="A bearer token (stored, mode 0600).")] = None,
    token_file: Annotated[
        str | None, typer.Option("--token-file", help="A file holding the token (read at each use).")
    ] = None,
) -> None:
    """Create or change a context; fields not given keep their value."""
    if token and token_file:
        raise CommandError("give --token or --token-file, not both", EXIT_BAD_INPUT)
    config = read_config()
    fields = dict(config["contexts"].get(name) or {})
    given = {"server": server, "token": token, "token_file": token_file}
    for key, value in given.items():
        if value is not None:
            fields[key] = value
    if token is not None:
        fields.pop("token_file", None)
    if token_file is not None:
        fields.pop("token", None)
    config["contexts"][name] = fields
    path = write_config(config)
    typer.echo(f"context {name} saved in {path}")


@config_app.command("use-context")
@reports_failures
def use_context(name: Annotated[str, typer.Argument(help="The context to use from now on.")]) -> None:
    """Make NAME the context every command uses."""
    config = read_config()
    context_named(config, name)  # refuses an unknown name, listing the known ones
    config["current_context"] = name
    path = write_config(config)
    typer.echo(f"switched to context {name} ({path})")


@config_app.command("get-contexts")
@reports_failures
def get_contexts() -> None:
    """List the contexts; * marks the current one."""
    config = read_config()
    current = config.get("current_context")
    if not config["contexts"]:
        typer.echo("no contexts (loadmaster config set-context NAME --server URL)", err=True)
        return
    typer.echo("CURRENT  NAME                 SERVER                               TOKEN")
    for name, stored in sorted(config["contexts"].items()):
        fields = stored or {}
        credential = (
            "token"
            if fields.get("token")
            else f"file {fields['token_file']}"
            if fields.get("token_file")
            else "-"
        )
        marker = "*" if name == current else ""
        typer.echo(f"{marker:<8} {name:<20} {fields.get('server', '-'):<36} {credential}")


@config_app.command("current-context")
@reports_failures
def show_current_context() -> None:
    """Print the context in force (LOADMASTER_CONTEXT, else the file's current_context)."""
    context = current_context()
    if context is None:
        raise CommandError("no current context (loadmaster config use-context NAME)")
    typer.echo(context.name)


def register(app: typer.Typer) -> None:
    app.add_typer(config_app, name="config")
