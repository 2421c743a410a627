"""The ``loadmaster`` command: one typer app; each command lives in its own module and registers here."""

from __future__ import annotations

import typer

from loadmaster.cli import (
    agent,
    apply,
    audit,
    cordon,
    delete,
    describe,
    get,
    preview,
    server,
    simulate,
    status,
    token,
    up,
    why,
)

app = typer.Typer(
    name="loadmaster",
    help="loadmaster: a cluster workload scheduler and control plane.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """loadmaster: a cluster workload scheduler and control plane."""


simulate.register(app)
# The client side: talk to a running server (docs/api.md), run simulated nodes, or start everything (up).
for command_group in (apply, get, describe, delete, cordon, preview, why, status, audit, token, agent, up):
    command_group.register(app)
server.register(app)  # the server side: loadmaster server


def main() -> None:
    app()
