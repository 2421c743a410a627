"""The ``loadmaster`` command: one typer app; each command lives in its own module and registers here."""

from __future__ import annotations

import typer

from loadmaster.cli import simulate

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


def main() -> None:
    app()
