"""``loadmaster server``: run the control plane (REST API, store, leader-elected scheduler).

    loadmaster server --data-dir ./.loadmaster --listen 127.0.0.1:7480 [--store sqlite|memory|etcd://h:p,...]
                      [--lease-ttl 15] [--max-replicas 100000] [--max-objects-per-apply 10000]
                      [--cleanup-retention 30d] [--config loadmaster.yaml]
                      [--heartbeat-interval-s 30] [--node-status-interval-s 30] [--rebalance-interval-s 30]
                      [--max-moves-per-cycle 1] [--no-safety-tick]

SQLite in ``--data-dir`` is the default store; a second server on the same data dir refuses to start.
On etcd, several servers share the store: one leads, the others stand by and take over within
``--lease-ttl`` seconds of the leader's death.
Settings come from the defaults, then ``--config`` (a YAML file), then ``LOADMASTER_*`` environment
variables, then the flags given (docs/server-config.md).
On first start the server writes an admin token to ``<data-dir>/admin-token`` (mode 0600) and says so.
"""

from __future__ import annotations

import asyncio
import functools
import os
from pathlib import Path
from typing import Annotated

import structlog
import typer

from loadmaster.api.serve import RunningServer, serve
from loadmaster.controllers.deployments.rollout_plan import DEFAULT_STEP_TIMEOUT_S
from loadmaster.core.limits import DEFAULT_MAX_OBJECTS_PER_APPLY, DEFAULT_MAX_REPLICAS
from loadmaster.core.voluntary_moves import DEFAULT_MAX_MOVES_PER_CYCLE
from loadmaster.runtime.config import (
    DEFAULT_DATA_DIR,
    DEFAULT_DRAIN_TIMEOUT_S,
    DEFAULT_LISTEN,
    LOG_LEVELS,
    STORE_CHOICES,
    ConfigError,
)
from loadmaster.runtime.config_file import ConfigFileError, server_config
from loadmaster.runtime.plane.leadership.leader_etcd import DEFAULT_TTL_S
from loadmaster.runtime.plane.process.logging_setup import configure_logging
from loadmaster.store.interface import StoreError

log = structlog.get_logger(__name__)


def _announce(running: RunningServer, *, as_json: bool) -> None:
    """Where to connect and where the token is: plain lines for a person, events for a collector."""
    state = "created" if running.admin_token_created else "kept"
    if as_json:
        log.info("listening", url=running.url, store=running.plane.backend)
        log.info("admin token", state=state, path=str(running.admin_token_path), mode="0600")
        return
    typer.echo(f"loadmaster server listening on {running.url} (store: {running.plane.backend})", err=True)
    typer.echo(f"admin token {state} in {running.admin_token_path} (mode 0600)", err=True)


def server(
    context: typer.Context,
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
    node_loss_policy: Annotated[
        str,
        typer.Option(
            "--node-loss-policy",
            help="what moves off a lost node: single_replica (default), all or none; a service's "
            "node_loss_policy overrides it",
        ),
    ] = "single_replica",
    node_loss_wait_s: Annotated[
        float, typer.Option("--node-loss-wait-s", help="after NotReady, wait this long, then probe the host")
    ] = 30.0,
    agent_down_wait_s: Annotated[
        float,
        typer.Option("--agent-down-wait-s", help="host up but agent silent: wait this much more, then act"),
    ] = 30.0,
    cleanup_retention: Annotated[
        str,
        typer.Option(
            "--cleanup-retention", help="how long ended records (replicas, nodes) are kept, e.g. 30d"
        ),
    ] = "30d",
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="a YAML file of server settings (docs/server-config.md); LOADMASTER_* override it",
        ),
    ] = None,
    scale_up_webhook: Annotated[
        str | None, typer.Option("--scale-up-webhook", help="http(s) URL new scale-up requests are POSTed to")
    ] = None,
    heartbeat_interval_s: Annotated[
        float,
        typer.Option("--heartbeat-interval-s", help="how often the agents heartbeat (sample freshness)"),
    ] = 30.0,
    node_status_interval_s: Annotated[
        float, typer.Option("--node-status-interval-s", help="how often agents sample pressure (5..300)")
    ] = 30.0,
    rebalance_interval_s: Annotated[
        float, typer.Option("--rebalance-interval-s", help="the pressure rebalancer's cycle")
    ] = 30.0,
    max_moves_per_cycle: Annotated[
        int, typer.Option("--max-moves-per-cycle", help="voluntary moves (consolidation) per cycle")
    ] = DEFAULT_MAX_MOVES_PER_CYCLE,
    drain_timeout_s: Annotated[
        float,
        typer.Option("--drain-timeout-s", help="node remove: a replica not moved this soon aborts it"),
    ] = DEFAULT_DRAIN_TIMEOUT_S,
    rollout_step_timeout_s: Annotated[
        float,
        typer.Option(
            "--rollout-step-timeout-s",
            help="a rollout step not done this soon aborts the rollout (per service: rollout.step_timeout)",
        ),
    ] = DEFAULT_STEP_TIMEOUT_S,
    safety_tick: Annotated[
        bool,
        typer.Option(
            "--safety-tick/--no-safety-tick",
            help="--no-safety-tick: watch-only, no full cycle on a timer (as LRS's polling off)",
        ),
    ] = True,
    decide_in: Annotated[
        str,
        typer.Option(
            "--decide-in",
            help="where a cycle's decide step runs: process (a worker process, default) or thread",
        ),
    ] = "process",
) -> None:
    """Run the control plane: REST API, store, scheduler and controllers."""
    flags = {
        "etcd_prefix": etcd_prefix,
        "data_dir": data_dir,
        "listen": listen,
        "store": store,
        "debounce_s": debounce_ms / 1000,
        "safety_tick_s": tick_s,
        "not_ready_after_s": not_ready_after_s,
        "log_format": log_format,
        "log_level": log_level,
        "lease_ttl_s": lease_ttl,
        "max_replicas": max_replicas,
        "max_objects_per_apply": max_objects_per_apply,
        "cleanup_retention_s": cleanup_retention,
        "node_loss_policy": node_loss_policy,
        "node_loss_wait_s": node_loss_wait_s,
        "agent_down_wait_s": agent_down_wait_s,
        "scale_up_webhook": scale_up_webhook,
        "drain_timeout_s": drain_timeout_s,
        "rollout_step_timeout_s": rollout_step_timeout_s,
        "heartbeat_interval_s": heartbeat_interval_s,
        "node_status_interval_s": node_status_interval_s,
        "rebalance_interval_s": rebalance_interval_s,
        "max_moves_per_cycle": max_moves_per_cycle,
        "safety_tick_enabled": safety_tick,
        "decide_in": decide_in,
    }
    given = {
        field: value
        for (parameter, field), value in zip(_FLAG_FIELDS.items(), flags.values(), strict=True)
        if _given_on_the_command_line(context, parameter)
    }
    try:
        config = server_config(given, config_file, os.environ)
        config.check()
    except (ConfigError, ConfigFileError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
    log_format, log_level = config.log_format, config.log_level
    configure_logging(log_format, LOG_LEVELS[log_level])
    as_json = log_format == "json"
    try:
        asyncio.run(serve(config, on_ready=functools.partial(_announce, as_json=as_json)))
    except (StoreError, OSError, ValueError) as error:
        if as_json:
            log.error("cannot serve", error=str(error))
        else:
            typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None


# The flags' parameter names -> the ServerConfig fields they set (in the order ``flags`` lists them).
_FLAG_FIELDS = {
    "etcd_prefix": "etcd_prefix",
    "data_dir": "data_dir",
    "listen": "listen",
    "store": "store",
    "debounce_ms": "debounce_s",
    "tick_s": "safety_tick_s",
    "not_ready_after_s": "not_ready_after_s",
    "log_format": "log_format",
    "log_level": "log_level",
    "lease_ttl": "lease_ttl_s",
    "max_replicas": "max_replicas",
    "max_objects_per_apply": "max_objects_per_apply",
    "cleanup_retention": "cleanup_retention_s",
    "node_loss_policy": "node_loss_policy",
    "node_loss_wait_s": "node_loss_wait_s",
    "agent_down_wait_s": "agent_down_wait_s",
    "scale_up_webhook": "scale_up_webhook",
    "drain_timeout_s": "drain_timeout_s",
    "rollout_step_timeout_s": "rollout_step_timeout_s",
    "heartbeat_interval_s": "heartbeat_interval_s",
    "node_status_interval_s": "node_status_interval_s",
    "rebalance_interval_s": "rebalance_interval_s",
    "max_moves_per_cycle": "max_moves_per_cycle",
    "safety_tick": "safety_tick_enabled",
    "decide_in": "decide_in",
}


def _given_on_the_command_line(context: typer.Context, parameter: str) -> bool:
    """Whether the flag was written out (not its default): only those override the file and environment."""
    source = context.get_parameter_source(parameter)
    return source is not None and source.name == "COMMANDLINE"


def register(app: typer.Typer) -> None:
    app.command("server")(server)
