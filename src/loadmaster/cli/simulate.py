"""``loadmaster simulate FILE``: one scheduling cycle over a scenario file (JSON, or tables: --explain)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from loadmaster.cli.views.explain import print_explanation
from loadmaster.scenario.schema import ScenarioError, load_scenario
from loadmaster.scenario.simulate import simulate

EXIT_BAD_INPUT = 2
EXIT_EXPECT_FAILED = 1


def simulate_command(
    file: Annotated[Path, typer.Argument(help="Scenario YAML file (see the scenario format spec).")],
    explain: Annotated[
        bool, typer.Option("--explain", help="Print readable tables instead of JSON.")
    ] = False,
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 when the file's `expect` does not hold.")
    ] = False,
) -> None:
    """Run one scheduling cycle over a frozen cluster and print what the scheduler decides, and why."""
    try:
        scenario = load_scenario(file)
        plan, output = simulate(scenario)
    except (ScenarioError, ValueError) as exc:
        typer.echo(f"{file}: {exc}", err=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except OSError as exc:
        typer.echo(f"{file}: cannot read: {exc.strerror}", err=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    if explain:
        print_explanation(scenario, plan, output)
    else:
        sys.stdout.write(json.dumps(output, indent=1) + "\n")
    if check and not output.get("expect", {}).get("passed", True):
        raise typer.Exit(EXIT_EXPECT_FAILED)


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate_command)
