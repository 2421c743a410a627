"""``loadmaster simulate FILE``: one scheduling cycle over a scenario file, or the whole control plane over
virtual time for a timeline file (one with a ``timeline:`` key); JSON, or readable text with --explain."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from loadmaster.scenario.schema import ScenarioError, build_scenario

EXIT_BAD_INPUT = 2
EXIT_EXPECT_FAILED = 1


def simulate_command(
    file: Annotated[Path, typer.Argument(help="Scenario or timeline YAML file (see the format specs).")],
    explain: Annotated[
        bool, typer.Option("--explain", help="Print readable tables (a timeline: one line per event).")
    ] = False,
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 when the file's `expect` does not hold.")
    ] = False,
) -> None:
    """Run one scheduling cycle over a frozen cluster, or a timeline over virtual time, and print what the
    control plane decides, and why."""
    from loadmaster.runtime.plane.process.logging_setup import configure_logging
    from loadmaster.scenario.schema import load_document
    from loadmaster.timeline.harness import TimelineRunError, run_timeline
    from loadmaster.timeline.schema import build_timeline, is_timeline

    output: dict[str, Any]
    try:
        document = load_document(file)
        if is_timeline(document):
            # The control plane logs as a server does, to stderr: stdout is the JSON alone.
            configure_logging(level=logging.WARNING)
            output = run_timeline(build_timeline(document))
        else:
            from loadmaster.scenario.simulate import simulate

            scenario = build_scenario(document)
            plan, output = simulate(scenario)
    except (ScenarioError, TimelineRunError, ValueError) as exc:
        typer.echo(f"{file}: {exc}", err=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    if explain and "timeline" in output:
        from loadmaster.cli.views.timeline import print_timeline

        print_timeline(output)
    elif explain:
        from loadmaster.cli.views.explain import print_explanation

        print_explanation(scenario, plan, output)
    else:
        sys.stdout.write(json.dumps(output, indent=1) + "\n")
    if check and not output.get("expect", {}).get("passed", True):
        raise typer.Exit(EXIT_EXPECT_FAILED)


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate_command)
