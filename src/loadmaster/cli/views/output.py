"""Where and how results are printed: rich tables on stdout, YAML and JSON for scripts."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from typing import Annotated, Any

import typer
import yaml
from rich.console import Console

# Tables are never cut or squeezed: one whole row per line, as kubectl prints them (a terminal narrower
# than a row wraps it). rich would otherwise truncate to the terminal, or to 80 columns in a pipe.
UNBOUNDED_WIDTH = 100_000


class OutputFormat(StrEnum):
    TABLE = "table"
    WIDE = "wide"
    YAML = "yaml"
    JSON = "json"


OutputOption = Annotated[
    OutputFormat, typer.Option("--output", "-o", help="table, wide, yaml or json.", case_sensitive=False)
]


class ListFormat(StrEnum):
    """``get``'s formats: the common ones, and ``name`` (``kind/name`` per line, for ``xargs``)."""

    TABLE = "table"
    WIDE = "wide"
    YAML = "yaml"
    JSON = "json"
    NAME = "name"


ListOutputOption = Annotated[
    ListFormat,
    typer.Option("--output", "-o", help="table, wide, yaml, json or name.", case_sensitive=False),
]
NoHeadersOption = Annotated[
    bool, typer.Option("--no-headers", help="Tables without their header line (for scripts).")
]


def console(stderr: bool = False, fit_terminal: bool = False) -> Console:
    """A console on the current stdout (or stderr), made at call time so test runners' streams are used.

    ``fit_terminal`` keeps rich's idea of the page width: a live view (``status -w``) redraws in place
    and must know how many lines it drew.
    """
    out = Console(file=sys.stderr if stderr else sys.stdout, highlight=False)
    if not fit_terminal or not out.is_terminal:
        out.width = UNBOUNDED_WIDTH
    return out


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, sort_keys=False) + "\n")


def print_yaml(value: Any) -> None:
    sys.stdout.write(yaml.safe_dump(value, sort_keys=False, default_flow_style=False, allow_unicode=True))


def print_data(value: Any, output: OutputFormat | ListFormat) -> bool:
    """Print ``value`` as YAML or JSON when asked; False when the caller should draw its table instead."""
    if output == OutputFormat.JSON:
        print_json(value)
        return True
    if output == OutputFormat.YAML:
        print_yaml(value)
        return True
    return False
