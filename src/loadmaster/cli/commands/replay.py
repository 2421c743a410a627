"""``loadmaster replay TRACE``: a real trace through the scheduler on a virtual clock, once per config,
into a summary (JSON) and a report (one HTML page); see docs/replay.md."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

EXIT_BAD_INPUT = 2
DEFAULT_TRACES = Path("../shared/traces")


def replay_command(
    trace: Annotated[
        str,
        typer.Argument(help="openb[:VARIANT], nasa-ipsc, alibaba-2017[:N], or a scenario or timeline file."),
    ],
    out: Annotated[Path, typer.Option("--out", help="Folder for summary.json and report.html.")],
    data: Annotated[
        Path | None,
        typer.Option(
            "--data", help="The traces folder (default: $LOADMASTER_TRACES, else ../shared/traces)."
        ),
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="The first run's settings (default: the defaults).")
    ] = None,
    compare: Annotated[
        list[Path] | None, typer.Option("--compare", help="Another run's settings (repeatable).")
    ] = None,
    nodes: Annotated[
        int | None, typer.Option("--nodes", min=1, help="Replay on the trace's first N nodes.")
    ] = None,
    window: Annotated[
        str | None, typer.Option("--window", help="START:END: jobs arriving then, replayed until END (s).")
    ] = None,
) -> None:
    """Replay a trace through the real scheduler for each config, and compare them."""
    import dataclasses

    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from loadmaster.replay.run import AnyTrace, Window, end_of, replay_all
    from loadmaster.replay.run_config import RunConfig, load_run_config
    from loadmaster.replay.timeline_replay import TimelineTrace
    from loadmaster.replay.trace import TraceFormatError
    from loadmaster.replay.traces import UnknownTraceError, load_trace
    from loadmaster.runtime.plane.process.logging_setup import configure_logging
    from loadmaster.scenario.errors import ScenarioError

    folder = data or Path(os.environ.get("LOADMASTER_TRACES") or DEFAULT_TRACES)
    try:
        configs = [load_run_config(config) if config else RunConfig()]
        configs += [load_run_config(path) for path in compare or ()]
        if nodes is not None:
            configs = [dataclasses.replace(c, node_count=c.node_count or nodes) for c in configs]
        span = Window.parse(window) if window else Window()
        loaded = load_trace(trace, folder)
    except (ScenarioError, TraceFormatError, UnknownTraceError, FileNotFoundError, ValueError) as error:
        typer.echo(f"loadmaster replay: {error}", err=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    if isinstance(loaded, TimelineTrace):
        configure_logging(level=logging.WARNING)  # the control plane logs as a server does, to stderr

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[virtual]} virtual, {task.fields[placed]} jobs placed"),
        TimeRemainingColumn(),
        transient=False,
    ) as bar:

        def progress_of(run: RunConfig, windowed: AnyTrace) -> Callable[[float, int], None]:
            end = span.end_s or end_of(windowed) or 1.0
            task = bar.add_task(run.name, total=end, virtual="0 h", placed=0)

            def advance(now: float, placed: int) -> None:
                bar.update(task, completed=min(now, end), virtual=f"{now / 3600:,.1f} h", placed=placed)

            return advance

        try:
            summary = replay_all(loaded, configs, out, span, progress_of)
        except ValueError as error:
            typer.echo(f"loadmaster replay: {error}", err=True)
            raise typer.Exit(EXIT_BAD_INPUT) from None
    for figures in summary["configs"]:
        waits, use = figures["wait_s"], figures["utilisation"]
        typer.echo(
            f"{figures['name']}: {figures['placed']}/{figures['jobs']} placed, wait p50 {waits['p50']} s,"
            f" GPU {use['gpu']:.1%}, CPU {use['cpu']:.1%},"
            f" scheduler {figures['scheduler_cpu_s']} s CPU"
        )
    typer.echo(f"wrote {out / 'summary.json'} and {out / 'report.html'}")


def register(app: typer.Typer) -> None:
    app.command("replay")(replay_command)
