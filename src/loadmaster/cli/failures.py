"""How a command ends when something went wrong: one message on stderr and a non-zero exit code."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import typer

from loadmaster.cli.remote.client import CommandError

P = ParamSpec("P")
R = TypeVar("R")


def reports_failures(command: Callable[P, R]) -> Callable[P, R]:
    """Wrap a command so that ``CommandError`` prints ``error: <message>`` and exits with its code.

    ``functools.wraps`` keeps the signature visible to typer, which reads the options from it.
    """

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except CommandError as exc:
            typer.echo(f"error: {exc.message}", err=True)
            raise typer.Exit(exc.exit_code) from None

    return run
