"""``loadmaster agent --name NODE`` (the real node agent) and ``loadmaster agent --simulate``: parse the
options; the agents themselves live in ``loadmaster.agent``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from loadmaster.agent.host.address_pool import parse_address_pool
from loadmaster.agent.host.gpu_inventory import parse_gpus
from loadmaster.agent.host.machine import machine_capacity
from loadmaster.agent.host.node_shape import NodeShape, ShapeError, node_names, parse_capacity, parse_labels
from loadmaster.agent.link.api import AgentFatalError
from loadmaster.agent.node_agent import DEFAULT_STATUS_INTERVAL_S, NodeAgentSettings
from loadmaster.agent.process import run_agent_process, run_node_agent_process
from loadmaster.agent.replicas.supervisor import DEFAULT_HEALTHY_AFTER_S
from loadmaster.agent.simulation.settings import DEFAULT_HEARTBEAT_S, DEFAULT_POLL_S, AgentSettings
from loadmaster.cli.failures import reports_failures
from loadmaster.cli.remote.client import DEFAULT_SERVER, EXIT_BAD_INPUT, CommandError
from loadmaster.cli.remote.connection import (
    DEFAULT_DATA_DIR,
    DataDirOption,
    ServerOption,
    TokenOption,
    resolve_token,
)
from loadmaster.core.resources import ADDRESSES, GPU, QuantityError, parse_duration_s
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
    gpus: str | None = None,
    address_pool: str | None = None,
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
        inventory = parse_gpus(gpus) if gpus is not None else None
        pool = parse_address_pool(address_pool) if address_pool is not None else None
        for option, given, resource in (("--gpus", inventory, GPU), ("--address-pool", pool, ADDRESSES)):
            if given is not None and resource in shape.capacity:
                raise ShapeError(f"{option}: --capacity gives {resource} already; give one or the other")
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
        gpus=inventory,
        address_pool=pool,
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
    gpus: Annotated[
        str | None,
        typer.Option(
            "--gpus",
            help='Real agent: this machine\'s GPU devices, a count ("4") or DRIVER:MODEL[:CAPS] xCOUNT'
            ' ("nvidia:A100:gpu,compute x4").',
        ),
    ] = None,
    address_pool: Annotated[
        str | None,
        typer.Option(
            "--address-pool",
            help="Real agent: addresses for replicas with address: true, a network (127.0.10.0/28).",
        ),
    ] = None,
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
                gpus,
                address_pool,
            )
            run_node_agent_process(server.rstrip("/"), resolve_token(token, data_dir), node_settings, say)
            return
        for option, value in (("--gpus", gpus), ("--address-pool", address_pool)):
            if value is not None:
                raise CommandError(
                    f"{option}: the real agent's (--name NODE), not --simulate's", EXIT_BAD_INPUT
                )
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
