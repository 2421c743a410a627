"""The ``loadmaster`` command: one typer app; each command lives in its own module and registers here.

Only the invoked command's module is imported: ``loadmaster server`` pulls in FastAPI and uvicorn
(0.4 s of imports) and ``agent`` httpx, none of which ``simulate`` needs. ``--help``, no command or an
unknown one load every module, so the listing and typer's "no such command" stay whole. ``app`` (for
tests and in-process use) is the whole app, built when first asked for.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable
from functools import cache
from typing import Annotated

import typer

from loadmaster.runtime.plane.process.gc_policy import apply_gc_policy

# command -> the module of loadmaster.cli.commands that registers it, in the order ``--help`` lists them:
# simulate; the client side (talk to a running server, run simulated nodes, or start everything);
# the server side.
COMMAND_MODULES = {
    "simulate": "simulate",
    "replay": "replay",
    "apply": "apply",
    "get": "get",
    "describe": "describe",
    "delete": "delete",
    "cordon": "cordon",
    "uncordon": "cordon",
    "rollback": "rollback",
    "node": "node",
    "preview": "preview",
    "why": "why",
    "status": "status",
    "audit": "audit",
    "logs": "logs",
    "token": "token",
    "agent": "agent",
    "up": "up",
    "server": "server",
    "config": "config",
}
# Set by the shell while it asks for completions (typer's completion): every command must be known then.
COMPLETION_VARIABLE = "_LOADMASTER_COMPLETE"


def _print_version(asked: bool) -> None:
    if asked:
        from loadmaster.cli.version import version_line

        typer.echo(version_line())
        raise typer.Exit()


def build_app(modules: Iterable[str]) -> typer.Typer:
    app = typer.Typer(
        name="loadmaster",
        help="loadmaster: a cluster workload scheduler and control plane.",
        no_args_is_help=True,
        add_completion=True,  # --install-completion / --show-completion for bash, zsh and fish
        pretty_exceptions_enable=False,
    )

    @app.callback()
    def _root(
        version: Annotated[
            bool,
            typer.Option(
                "--version", help="Print the version and exit.", callback=_print_version, is_eager=True
            ),
        ] = False,
    ) -> None:
        """loadmaster: a cluster workload scheduler and control plane."""

    for module in dict.fromkeys(modules):  # once each, in order (cordon registers uncordon too)
        importlib.import_module(f"loadmaster.cli.commands.{module}").register(app)
    return app


@cache
def whole_app() -> typer.Typer:
    return build_app(COMMAND_MODULES.values())


def __getattr__(name: str) -> typer.Typer:
    """``from loadmaster.cli.main import app``: the whole app, built at first use."""
    if name == "app":
        return whole_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    apply_gc_policy()
    command = sys.argv[1] if len(sys.argv) > 1 else None
    module = None if COMPLETION_VARIABLE in os.environ else COMMAND_MODULES.get(command or "")
    (build_app([module]) if module is not None else whole_app())()
