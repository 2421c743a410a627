"""Where and how results are printed: rich tables on stdout, YAML and JSON for scripts."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from typing import Annotated, Any

import typer
import yaml
from rich.console import Console

# Off a terminal (pipes, CI, tests) nothing tells rich how wide the page is; a table must not be cut to
# rich's 80-column default there, or scripts would read truncated names.
PIPE_WIDTH = 250


class OutputFormat(StrEnum):
    TABLE = "table"
    WIDE = "wide"
    YAML = "yaml"
    JSON = "json"


OutputOption = Annotated[
    OutputFormat, typer.Option("--output", "-o", help="table, wide, yaml or json.", case_sensitive=False)
]


def console(stderr: bool = False) -> Console:
    """A console on the current stdout (or stderr), made at call time so test runners' streams are used."""
    out = Console(file=sys.stderr if stderr else sys.stdout, highlight=False)
    if not out.is_terminal:
        out.width = PIPE_WIDTH
    return out


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, sort_keys=False) + "\n")


def print_yaml(value: Any) -> None:
    sys.stdout.write(yaml.safe_dump(value, sort_keys=False, default_flow_style=False, allow_unicode=True))


def print_data(value: Any, output: OutputFormat) -> bool:
    """Print ``value`` as YAML or JSON when asked; False when the caller should draw its table instead."""
    if output is OutputFormat.JSON:
        print_json(value)
        return True
    if output is OutputFormat.YAML:
        print_yaml(value)
        return True
    return False
