"""``loadmaster agent --name NODE`` (the real node agent) and ``loadmaster agent --simulate``: parse the
options; the agents themselves live in ``loadmaster.agent``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from loadmaster.agent.machine import machine_capacity
from loadmaster.agent.node_agent import DEFAULT_STATUS_INTERVAL_S, NodeAgentSettings
from loadmaster.agent.node_shape import NodeShape, ShapeError, node_names, parse_capacity, parse_labels
from loadmaster.agent.process import run_agent_process, run_node_agent_process
from loadmaster.agent.simulated import DEFAULT_HEARTBEAT_S, DEFAULT_POLL_S, AgentFatalError, AgentSettings
from loadmaster.agent.supervisor import DEFAULT_HEALTHY_AFTER_S
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
from loadmaster.manifests.validation import dns_name_problem


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


# The simulated nodes' shape when --capacity is not given; a real agent measures its machine instead.
SIMULATED_CAPACITY = "cpu=8,memory=32Gi"
DEFAULT_WORK_DIR = Path(".loadmaster-agent")


def node_settings_from_options(
    name: str,
    capacity: str | None,
    system_reserved: str,
    labels: str,
    work_dir: Path,
    heartbeat: str,
    status_interval: str,
    poll: str,
    listen: str,
    stop_replicas_on_exit: bool = False,
    healthy_after: str = f"{DEFAULT_HEALTHY_AFTER_S:g}s",
) -> NodeAgentSettings:
    host, _, port = listen.rpartition(":")
    if host != "127.0.0.1" or not port.isdigit() or int(port) > 65535:
        raise CommandError(
            f'--listen: expected 127.0.0.1:PORT (0: any free port), got "{listen}"', EXIT_BAD_INPUT
        )
    try:
        problem = dns_name_problem(name)
        if problem:
            raise ShapeError(f'--name: "{name}": {problem}')
        shape = NodeShape(
            capacity=parse_capacity(capacity) if capacity else machine_capacity(),
            labels=parse_labels(labels),
            system_reserved=parse_capacity(system_reserved, "--system-reserved") if system_reserved else {},
        )
    except ShapeError as exc:
        raise CommandError(str(exc), EXIT_BAD_INPUT) from None
    return NodeAgentSettings(
        name=name,
        shape=shape,
        work_dir=work_dir.resolve(),
        heartbeat_s=_seconds("--heartbeat", heartbeat),
        status_interval_s=_seconds("--status-interval", status_interval),
        poll_s=_seconds("--poll", poll),
        healthy_after_s=_seconds("--healthy-after", healthy_after),
        listen_host=host,
        listen_port=int(port),
        stop_replicas_on_exit=stop_replicas_on_exit,
    )


@reports_failures
def agent_command(
    name: Annotated[
        str | None, typer.Option("--name", help="Run replicas on this machine as node NAME (the real agent).")
    ] = None,
    simulate: Annotated[
        bool, typer.Option("--simulate", help="Simulate nodes: report replicas Running, run nothing.")
    ] = False,
    count: Annotated[int, typer.Option("--count", min=1, help="How many nodes to simulate.")] = 1,
    capacity: Annotated[
        str | None,
        typer.Option(
            "--capacity",
            help="Capacity: cpu=8,memory=32Gi[,gpu=4] (real agent: measured from the machine when omitted).",
        ),
    ] = None,
    system_reserved: Annotated[
        str,
        typer.Option("--system-reserved", help="Real agent: capacity kept for the system, cpu=..,memory=.."),
    ] = "",
    work_dir: Annotated[
        Path, typer.Option("--work-dir", help="Real agent: replicas' directories, logs and adoption records.")
    ] = DEFAULT_WORK_DIR,
    status_interval: Annotated[
        str, typer.Option("--status-interval", help="Real agent: pressure samples (node_status_interval).")
    ] = f"{DEFAULT_STATUS_INTERVAL_S:g}s",
    healthy_after: Annotated[
        str,
        typer.Option(
            "--healthy-after",
            help="Real agent: a process without a healthcheck is healthy once up this long (the restart"
            " budget is cleared by healthy reports).",
        ),
    ] = f"{DEFAULT_HEALTHY_AFTER_S:g}s",
    listen: Annotated[
        str, typer.Option("--listen", help="Real agent: its /probe and /logs endpoint, 127.0.0.1:PORT.")
    ] = "127.0.0.1:0",
    stop_replicas_on_exit: Annotated[
        bool,
        typer.Option(
            "--stop-replicas-on-exit",
            help="Real agent: stop its replicas when it stops (default: leave them to the next agent).",
        ),
    ] = False,
    labels: Annotated[str, typer.Option("--labels", help="Each node's labels: k=v[,k=v].")] = "",
    name_prefix: Annotated[
        str, typer.Option("--name-prefix", help="Nodes are named <prefix>-01, ...")
    ] = "sim",
    heartbeat: Annotated[
        str | None,
        typer.Option(
            "--heartbeat", help=f"Heartbeat period (simulated: {DEFAULT_HEARTBEAT_S:g}s, real: 30s)."
        ),
    ] = None,
    poll: Annotated[
        str, typer.Option("--poll", help="Assignment poll period, used when the token may not watch.")
    ] = f"{DEFAULT_POLL_S:g}s",
    server: ServerOption = DEFAULT_SERVER,
    token: TokenOption = None,
    data_dir: DataDirOption = DEFAULT_DATA_DIR,
) -> None:
    """Run this machine's replicas as node NAME (--name), or simulate N nodes (--simulate), until
    Ctrl-C/SIGTERM. The real agent's processes keep running when it stops: the next agent adopts them."""
    if simulate == (name is not None):
        raise CommandError(
            "give --name NODE (run replicas here) or --simulate (simulated nodes)", EXIT_BAD_INPUT
        )

    def say(line: str) -> None:
        typer.echo(f"agent: {line}", err=True)

    try:
        if name is not None:
            node_settings = node_settings_from_options(
                name,
                capacity,
                system_reserved,
                labels,
                work_dir,
                heartbeat or "30s",
                status_interval,
                poll,
                listen,
                stop_replicas_on_exit,
                healthy_after,
            )
            run_node_agent_process(server.rstrip("/"), resolve_token(token, data_dir), node_settings, say)
            return
        settings = settings_from_options(
            count,
            capacity or SIMULATED_CAPACITY,
            labels,
            name_prefix,
            heartbeat or f"{DEFAULT_HEARTBEAT_S:g}s",
            poll,
        )
        run_agent_process(server.rstrip("/"), resolve_token(token, data_dir), settings, say)
    except AgentFatalError as exc:
        raise CommandError(str(exc)) from None


def register(app: typer.Typer) -> None:
    app.command("agent")(agent_command)
