"""``loadmaster server``: run the control plane (REST API, store, leader-elected scheduler).

    loadmaster server --data-dir ./.loadmaster --listen 127.0.0.1:7480 [--store sqlite|memory|etcd://h:p,...]
                      [--lease-ttl 15] [--max-replicas 100000] [--max-objects-per-apply 10000]

SQLite in ``--data-dir`` is the default store; a second server on the same data dir refuses to start.
On etcd, several servers share the store: one leads, the others stand by and take over within
``--lease-ttl`` seconds of the leader's death.
On first start the server writes an admin token to ``<data-dir>/admin-token`` (mode 0600) and says so.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from loadmaster.api.serve import RunningServer, serve
from loadmaster.core.limits import DEFAULT_MAX_OBJECTS_PER_APPLY, DEFAULT_MAX_REPLICAS
from loadmaster.runtime.config import (
    DEFAULT_DATA_DIR,
    DEFAULT_DRAIN_TIMEOUT_S,
    DEFAULT_LISTEN,
    LOG_LEVELS,
    STORE_CHOICES,
    ConfigError,
    ServerConfig,
)
from loadmaster.runtime.plane.leader_etcd import DEFAULT_TTL_S
from loadmaster.runtime.plane.logging_setup import configure_logging
from loadmaster.store.interface import StoreError


def _announce(running: RunningServer) -> None:
    state = "created" if running.admin_token_created else "kept"
    typer.echo(f"loadmaster server listening on {running.url} (store: {running.plane.backend})", err=True)
    typer.echo(f"admin token {state} in {running.admin_token_path} (mode 0600)", err=True)


def server(
    data_dir: Annotated[
        Path, typer.Option("--data-dir", help="where the SQLite store and admin token live")
    ] = (DEFAULT_DATA_DIR),
    listen: Annotated[str, typer.Option("--listen", help="HOST:PORT to serve the API on")] = DEFAULT_LISTEN,
    store: Annotated[str, typer.Option("--store", help=STORE_CHOICES)] = "sqlite",
    etcd_prefix: Annotated[
        str, typer.Option("--etcd-prefix", help="key root in etcd (HA servers share it)")
    ] = ("/loadmaster"),
    debounce_ms: Annotated[
        float,
        typer.Option("--debounce-ms", help="quiet time after a burst (a fifth of it after a few placements)"),
    ] = 50.0,
    tick_s: Annotated[
        float, typer.Option("--tick-s", help="safety tick: a full cycle at least this often")
    ] = 30.0,
    not_ready_after_s: Annotated[
        float,
        typer.Option("--not-ready-after-s", help="a node not heard from for this long is NotReady"),
    ] = 90.0,
    log_format: Annotated[str, typer.Option("--log-format", help="console or json")] = "console",
    log_level: Annotated[
        str,
        typer.Option("--log-level", help="debug, info, warning or error (debug: every cycle and pass)"),
    ] = "info",
    lease_ttl: Annotated[
        int, typer.Option("--lease-ttl", help="etcd only: seconds a standby waits for a dead leader")
    ] = DEFAULT_TTL_S,
    max_replicas: Annotated[
        int, typer.Option("--max-replicas", help="most replicas per service and tasks per Job (422 above)")
    ] = DEFAULT_MAX_REPLICAS,
    max_objects_per_apply: Annotated[
        int, typer.Option("--max-objects-per-apply", help="most objects in one apply or preview (422 above)")
    ] = DEFAULT_MAX_OBJECTS_PER_APPLY,
    drain_timeout_s: Annotated[
        float,
        typer.Option("--drain-timeout-s", help="node remove: a replica not moved this soon aborts it"),
    ] = DEFAULT_DRAIN_TIMEOUT_S,
) -> None:
    """Run the control plane: REST API, store, scheduler and controllers."""
    config = ServerConfig(
        etcd_prefix=etcd_prefix,
        data_dir=data_dir,
        listen=listen,
        store=store,
        debounce_s=debounce_ms / 1000,
        safety_tick_s=tick_s,
        not_ready_after_s=not_ready_after_s,
        log_format=log_format,
        log_level=log_level,
        lease_ttl_s=lease_ttl,
        max_replicas=max_replicas,
        max_objects_per_apply=max_objects_per_apply,
        drain_timeout_s=drain_timeout_s,
    )
    try:
        config.check()
    except ConfigError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
    configure_logging(log_format, LOG_LEVELS[log_level])
    try:
        asyncio.run(serve(config, on_ready=_announce))
    except (StoreError, OSError, ValueError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None


def register(app: typer.Typer) -> None:
    app.command("server")(server)
