"""``loadmaster agent --simulate``: parse the options; the agent itself lives in ``loadmaster.agent``."""

from __future__ import annotations

from typing import Annotated

import typer

from loadmaster.agent.node_shape import NodeShape, ShapeError, node_names, parse_capacity, parse_labels
from loadmaster.agent.process import run_agent_process
from loadmaster.agent.simulated import DEFAULT_HEARTBEAT_S, DEFAULT_POLL_S, AgentFatalError, AgentSettings
from loadmaster.cli.failures import reports_failures
from loadmaster.cli.remote.client import DEFAULT_SERVER, EXIT_BAD_INPUT, CommandError
from loadmaster.cli.remote.connection import (
    DEFAULT_DATA_DIR,
    DataDirOption,
    ServerOption,
    TokenOption,
    resolve_token,
)
from loadmaster.core.resources import QuantityError, parse_duration_s


def _seconds(option: str, text: str) -> float:
    try:
        seconds = parse_duration_s(text)
    except QuantityError as exc:
        raise CommandError(f"{option}: {exc}", EXIT_BAD_INPUT) from None
    if seconds <= 0:
        raise CommandError(f"{option}: must be longer than 0s, got {text}", EXIT_BAD_INPUT)
    return seconds


def settings_from_options(
    count: int, capacity: str, labels: str, name_prefix: str, heartbeat: str, poll: str
) -> AgentSettings:
    try:
        shape = NodeShape(capacity=parse_capacity(capacity), labels=parse_labels(labels))
        names = tuple(node_names(name_prefix, count))
    except ShapeError as exc:
        raise CommandError(str(exc), EXIT_BAD_INPUT) from None
    return AgentSettings(
        names=names,
        shape=shape,
        heartbeat_s=_seconds("--heartbeat", heartbeat),
        poll_s=_seconds("--poll", poll),
    )


@reports_failures
def agent_command(
    simulate: Annotated[
        bool, typer.Option("--simulate", help="Simulate nodes (required: this build runs no containers).")
    ] = False,
    count: Annotated[int, typer.Option("--count", min=1, help="How many nodes to simulate.")] = 1,
    capacity: Annotated[
        str, typer.Option("--capacity", help="Each node's capacity: cpu=8,memory=32Gi[,gpu=4].")
    ] = "cpu=8,memory=32Gi",
    labels: Annotated[str, typer.Option("--labels", help="Each node's labels: k=v[,k=v].")] = "",
    name_prefix: Annotated[
        str, typer.Option("--name-prefix", help="Nodes are named <prefix>-01, ...")
    ] = "sim",
    heartbeat: Annotated[
        str, typer.Option("--heartbeat", help="Heartbeat period.")
    ] = f"{DEFAULT_HEARTBEAT_S:g}s",
    poll: Annotated[
        str, typer.Option("--poll", help="Assignment poll period, used when the token may not watch.")
    ] = f"{DEFAULT_POLL_S:g}s",
    server: ServerOption = DEFAULT_SERVER,
    token: TokenOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Register N simulated nodes, heartbeat them, and run what is assigned to them until Ctrl-C/SIGTERM."""
    if not simulate:
        raise CommandError(
            "only --simulate is supported: this build has no container runtime to run replicas with",
            EXIT_BAD_INPUT,
        )
    settings = settings_from_options(count, capacity, labels, name_prefix, heartbeat, poll)

    def say(line: str) -> None:
        typer.echo(f"agent: {line}", err=True)

    try:
        run_agent_process(server.rstrip("/"), resolve_token(token, data_dir), settings, say)
    except AgentFatalError as exc:
        raise CommandError(str(exc)) from None


def register(app: typer.Typer) -> None:
    app.command("agent")(agent_command)
