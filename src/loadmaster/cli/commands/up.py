"""``loadmaster up``: a whole control plane on this machine in one command.

Starts ``loadmaster server`` on SQLite in the data dir, ``loadmaster agent --simulate`` with a few
nodes, applies ``examples/``, waits until every replica of those examples is Scheduled or Running,
prints where each one went and what to try next, then runs until Ctrl-C (``--exit`` stops right after
the placements, for CI). Children log to ``<data-dir>/server.log`` and ``agent.log``.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Annotated

import typer

from loadmaster.cli.commands.apply import applied_line
from loadmaster.cli.failures import reports_failures
from loadmaster.cli.invocation import command_prefix
from loadmaster.cli.local_processes import Child, is_ready, start_child, stop_child, wait_until
from loadmaster.cli.manifest_files import read_sources, validate_sources
from loadmaster.cli.placements import next_steps, placements_table, wait_until_placed
from loadmaster.cli.remote.client import EXIT_BAD_INPUT, ApiClient, CommandError
from loadmaster.cli.remote.connection import DEFAULT_DATA_DIR, admin_token_path
from loadmaster.cli.views.output import console

DEFAULT_LISTEN = "127.0.0.1:7480"
DEFAULT_NODES = 3
DEFAULT_CAPACITY = "cpu=8,memory=32Gi,gpu=2"
START_TIMEOUT_S = 30.0
EXIT_INTERRUPTED = 130  # the shell's code for "stopped by SIGINT"
# The examples shipped inside the package (package data; in a source tree, src/loadmaster/examples is a
# link to the top-level examples/ the README names).
PACKAGE_DIR = Path(__file__).resolve().parents[2]  # src/loadmaster (this is cli/commands/up.py)
BUNDLED_EXAMPLES = (PACKAGE_DIR / "examples").resolve()
# What --real applies by default: commands, which the process runtime can run (examples/ uses images).
BUNDLED_REAL_EXAMPLES = PACKAGE_DIR.parents[1] / "examples-real"
REAL_NODE = "local"


def server_url(listen: str) -> str:
    """``HOST:PORT`` -> the URL a client uses (a wildcard address is reached through 127.0.0.1)."""
    host, sep, port = listen.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise CommandError(
            f'--listen: expected HOST:PORT, e.g. 127.0.0.1:7480, got "{listen}"', EXIT_BAD_INPUT
        )
    if host in ("0.0.0.0", "::", "[::]"):
        host = "127.0.0.1"
    return f"http://{host}:{port}"


@reports_failures
def up_command(
    data_dir: Annotated[
        Path, typer.Option("--data-dir", help="Where the server keeps its SQLite store.")
    ] = DEFAULT_DATA_DIR,
    listen: Annotated[
        str, typer.Option("--listen", help="HOST:PORT the server listens on.")
    ] = DEFAULT_LISTEN,
    nodes: Annotated[int, typer.Option("--nodes", min=1, help="Simulated nodes to start.")] = DEFAULT_NODES,
    capacity: Annotated[
        str, typer.Option("--capacity", help="Each simulated node's capacity.")
    ] = DEFAULT_CAPACITY,
    examples: Annotated[
        Path, typer.Option("--examples", help="Manifests to apply (a file or a directory).")
    ] = BUNDLED_EXAMPLES,
    exit_after: Annotated[
        bool, typer.Option("--exit", help="Stop everything once the placements are shown (for CI).")
    ] = False,
    timeout: Annotated[
        float, typer.Option("--timeout", min=1, help="Seconds to wait for placements.")
    ] = 60.0,
    real: Annotated[
        bool,
        typer.Option(
            "--real",
            help=f"One real agent (node {REAL_NODE}) running replicas as processes here, instead of "
            "simulated nodes; applies examples-real/ unless --examples says otherwise.",
        ),
    ] = False,
) -> None:
    """Start a server, simulated nodes and the examples, show where every replica went, run until Ctrl-C."""
    url = server_url(listen)
    if real and examples == BUNDLED_EXAMPLES:
        examples = BUNDLED_REAL_EXAMPLES
    # Refuse bad examples before starting anything.
    manifests = validate_sources(read_sources([str(examples)]))
    data_dir.mkdir(parents=True, exist_ok=True)
    children: list[Child] = []
    shown = False
    # SIGTERM (a supervisor, `kill`) stops the children as Ctrl-C does, instead of orphaning them.
    previous_handler = signal.signal(signal.SIGTERM, _interrupt)
    try:
        server = start_child(
            "server", ["server", "--data-dir", str(data_dir), "--listen", listen], data_dir / "server.log"
        )
        children.append(server)
        wait_until(lambda: is_ready(url), server, f"waiting for the server at {url}", START_TIMEOUT_S)
        token_file = admin_token_path(data_dir)
        wait_until(token_file.exists, server, f"waiting for {token_file}", START_TIMEOUT_S)
        if real:
            # Its replicas stop with it: `up` leaves nothing running behind it.
            agent_args = ["agent", "--name", REAL_NODE, "--work-dir", str(data_dir / "agent-work")]
            agent_args += ["--stop-replicas-on-exit"]
            starting = f"a real agent (node {REAL_NODE}, work dir {data_dir / 'agent-work'}) starting"
        else:
            agent_args = ["agent", "--simulate", "--count", str(nodes), "--capacity", capacity]
            starting = f"{nodes} simulated node(s) starting"
        agent_args += ["--server", url, "--data-dir", str(data_dir)]
        children.append(start_child("agent", agent_args, data_dir / "agent.log"))
        typer.echo(f"server at {url} (log: {data_dir / 'server.log'}); {starting}")
        with ApiClient(url, token_file.read_text().strip()) as api:
            for item in api.lm.apply([manifest.to_dict() for manifest in manifests]):
                typer.echo(applied_line(dict(item)))
            placed = wait_until_placed(api, manifests, children, timeout)
            if real:  # placed is not started: the agent still has to start the processes
                placed = wait_until_placed(api, manifests, children, timeout, ("Running",), "running")
        console().print(placements_table(placed))
        typer.echo(
            next_steps(
                command_prefix(),
                url,
                data_dir,
                examples,
                custom_server=listen != DEFAULT_LISTEN,
                stopped=exit_after,
            )
        )
        shown = True
        if not exit_after:
            _watch_children(children)
    except KeyboardInterrupt:
        typer.echo("\nstopping (the data dir keeps the state; `loadmaster up` again resumes it)", err=True)
        if not shown:
            raise CommandError("interrupted before every replica was placed", EXIT_INTERRUPTED) from None
    finally:
        signal.signal(signal.SIGTERM, previous_handler)
        for child in reversed(children):
            stop_child(child)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _watch_children(children: list[Child]) -> None:
    """Block until Ctrl-C or SIGTERM (KeyboardInterrupt); a child that dies meanwhile is an error."""
    while True:
        for child in children:
            if child.exited() is not None:
                raise child.failure("running")
        time.sleep(0.5)


def register(app: typer.Typer) -> None:
    app.command("up")(up_command)
