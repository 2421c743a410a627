"""``ServerConfig``: everything ``loadmaster server`` (and ``loadmaster up``, and tests) can set."""

from __future__ import annotations

import logging
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path

from loadmaster.controllers.deployments.rollout_plan import DEFAULT_STEP_TIMEOUT_S
from loadmaster.controllers.nodes.node_loss import POLICIES as NODE_LOSS_POLICIES
from loadmaster.controllers.restarts import DEFAULT_RESTART_BUDGET
from loadmaster.core.heartbeat import HEARTBEAT_FRESH_FOR
from loadmaster.core.limits import (
    DEFAULT_MAX_OBJECTS_PER_APPLY,
    DEFAULT_MAX_REPLICAS,
    MAX_INTEGER,
    AdmissionLimits,
)
from loadmaster.core.model import SchedulerConfig
from loadmaster.core.search_backoff import SearchBackoff
from loadmaster.core.voluntary_moves import DEFAULT_MAX_MOVES_PER_CYCLE
from loadmaster.runtime.http_limits import HttpLimits
from loadmaster.runtime.plane.leadership.leader_etcd import DEFAULT_TTL_S
from loadmaster.runtime.plane.pass_loop import DEFAULT_DEBOUNCE_S, DEFAULT_SAFETY_TICK_S
from loadmaster.runtime.reconciling.cleanup import DEFAULT_CLEANUP_INTERVAL_S, DEFAULT_CLEANUP_RETENTION_S
from loadmaster.runtime.scheduling.deciding.deciders import DECIDE_IN_CHOICES
from loadmaster.runtime.scheduling.timeslot_windows import DEFAULT_TIMESLOT_LEAD

DEFAULT_DATA_DIR = Path(".loadmaster")
DEFAULT_LISTEN = "127.0.0.1:7480"
# docs/api.md: apply bodies over 8 MiB are refused as too large before they are parsed.
DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
# The seeds' range for the agents' pressure sampling interval (JACO H1).
NODE_STATUS_INTERVAL_RANGE_S = (5.0, 300.0)
STORE_CHOICES = "sqlite | memory | etcd://host:port[,host:port...]"


class ConfigError(ValueError):
    """A setting that cannot work; the message names the option."""


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:7480`` for IPv6) -> (host, port); port 0 picks a free one."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(f'--listen: expected HOST:PORT (e.g. 127.0.0.1:7480), got "{text}"')
    host = host.strip("[]") or "127.0.0.1"
    return host, int(port)


def default_identity() -> str:
    """This server's name in the leader key and the audit log: host name and process id."""
    return f"{socket.gethostname().lower()}-{os.getpid()}"


LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


DEFAULT_DRAIN_TIMEOUT_S = 300.0  # the seeds' per-replica drain_timeout (5 min)


@dataclass(frozen=True, slots=True)
class ServerConfig:
    data_dir: Path = DEFAULT_DATA_DIR
    listen: str = DEFAULT_LISTEN
    store: str = "sqlite"  # sqlite | memory | etcd://h:p,...
    identity: str = field(default_factory=default_identity)
    debounce_s: float = DEFAULT_DEBOUNCE_S
    safety_tick_s: float = DEFAULT_SAFETY_TICK_S
    # Off: watch-only, no full pass on a timer (LRS's RECONCILE_POLLING_ENABLED=false; pass_loop.py).
    safety_tick_enabled: bool = True
    not_ready_after_s: float = HEARTBEAT_FRESH_FOR.total_seconds()  # --not-ready-after-s
    resign_pause_s: float = 1.0
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    etcd_prefix: str = "/loadmaster"
    # The leader's etcd lease: a standby takes over at most this long after the leader dies.
    lease_ttl_s: int = DEFAULT_TTL_S
    log_format: str = "console"  # console | json
    log_level: str = "info"  # debug adds a line per scheduler cycle and controller pass (LOG_LEVELS)
    http_limits: HttpLimits = field(default_factory=HttpLimits)
    # Admission (docs/api.md): a service's replicas and a Job's tasks, and objects per apply/preview.
    max_replicas: int = DEFAULT_MAX_REPLICAS
    max_objects_per_apply: int = DEFAULT_MAX_OBJECTS_PER_APPLY
    # Node loss (controllers/nodes/node_loss.py): the cluster's policy (a service's node_loss_policy overrides
    # it), the wait after NotReady before the host is probed, and the extra wait when only its agent is down.
    node_loss_policy: str = "single_replica"  # --node-loss-policy: single_replica | all | none
    node_loss_wait_s: float = 30.0
    agent_down_wait_s: float = 30.0
    # The workload lifecycle (docs/server-config.md): restarts before Failed, ended records' cleanup,
    # time-slots' lead time, and the scheduler's profile, actions and limits.
    restart_budget: int = DEFAULT_RESTART_BUDGET
    cleanup_interval_s: float = DEFAULT_CLEANUP_INTERVAL_S
    cleanup_retention_s: float = DEFAULT_CLEANUP_RETENTION_S  # --cleanup-retention
    timeslot_lead_time_s: float = DEFAULT_TIMESLOT_LEAD.total_seconds()
    scheduler: SchedulerConfig = field(default_factory=SchedulerConfig)
    # New scale-up requests are POSTed here as JSON (--scale-up-webhook; LRS K1); None: API only.
    scale_up_webhook: str | None = None
    # The pressure rebalancer (issue 16): agents sample every node_status_interval_s (the seeds' range
    # 5 s .. 5 min) and heartbeat every heartbeat_interval_s; a cycle runs every rebalance_interval_s.
    heartbeat_interval_s: float = 30.0
    node_status_interval_s: float = 30.0
    rebalance_interval_s: float = 30.0
    # Voluntary moves (consolidation) per scheduling cycle, cluster-wide (seed conflict 5).
    max_moves_per_cycle: int = DEFAULT_MAX_MOVES_PER_CYCLE
    # node remove: a replica whose replacement is not Running within this aborts it (--drain-timeout-s).
    drain_timeout_s: float = DEFAULT_DRAIN_TIMEOUT_S
    # A rollout step not done this soon aborts the rollout (a service's rollout.step_timeout overrides it).
    rollout_step_timeout_s: float = DEFAULT_STEP_TIMEOUT_S
    # Where a cycle's decide step runs (--decide-in; runtime/scheduling/deciding/deciders.py): "process", a
    # worker process, so a long cycle cannot starve the HTTP event loop; "thread", in the server's process.
    decide_in: str = "process"
    # The failed-search backoff of the evicting actions, per action (core/search_backoff.py; KAI's
    # min/maxFailedSearchBackoff): ``search_backoff: {consolidate_min: 30s, consolidate_max: 5m}``. Off.
    search_backoff: SearchBackoff = field(default_factory=SearchBackoff)

    @property
    def admission(self) -> AdmissionLimits:
        return AdmissionLimits(self.max_replicas, self.max_objects_per_apply)

    def check(self) -> None:
        parse_listen(self.listen)
        if not (self.store in ("sqlite", "memory") or self.store.startswith("etcd://")):
            raise ConfigError(f'--store: expected {STORE_CHOICES}, got "{self.store}"')
        for name in ("debounce_s", "safety_tick_s", "resign_pause_s"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name}: must be >= 0, got {getattr(self, name)}")
        if self.not_ready_after_s <= 0:
            raise ConfigError(
                f"not_ready_after_s (--not-ready-after-s): must be > 0, got {self.not_ready_after_s}"
            )
        if self.rollout_step_timeout_s <= 0:
            raise ConfigError(
                "rollout_step_timeout_s (--rollout-step-timeout-s): must be > 0, "
                f"got {self.rollout_step_timeout_s}"
            )
        if self.drain_timeout_s <= 0:
            raise ConfigError(f"drain_timeout_s (--drain-timeout-s): must be > 0, got {self.drain_timeout_s}")
        if self.safety_tick_s <= 0:
            raise ConfigError(f"safety_tick_s: must be > 0, got {self.safety_tick_s}")
        if self.max_body_bytes < 1:
            raise ConfigError(f"max_body_bytes: must be >= 1, got {self.max_body_bytes}")
        for problem in self.http_limits.problems():
            raise ConfigError(f"http_limits.{problem}")
        for name, flag in (
            ("max_replicas", "--max-replicas"),
            ("max_objects_per_apply", "--max-objects-per-apply"),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_INTEGER:
                raise ConfigError(
                    f"{name} ({flag}): must be a whole number from 1 to {MAX_INTEGER}, got {value!r}"
                )
        if self.node_loss_policy not in NODE_LOSS_POLICIES:
            raise ConfigError(
                f"node_loss_policy (--node-loss-policy): expected {' | '.join(NODE_LOSS_POLICIES)}, "
                f'got "{self.node_loss_policy}"'
            )
        for name, flag in (
            ("node_loss_wait_s", "--node-loss-wait-s"),
            ("agent_down_wait_s", "--agent-down-wait-s"),
        ):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} ({flag}): must be >= 0, got {getattr(self, name)}")
        if (
            not NODE_STATUS_INTERVAL_RANGE_S[0]
            <= self.node_status_interval_s
            <= NODE_STATUS_INTERVAL_RANGE_S[1]
        ):
            raise ConfigError(
                f"node_status_interval_s: must be from 5 to 300 seconds, got {self.node_status_interval_s}"
            )
        for key, problem in self.search_backoff.problems():
            raise ConfigError(f"search_backoff.{key}: {problem}")
        moves = self.max_moves_per_cycle
        if isinstance(moves, bool) or not isinstance(moves, int) or moves < 0:
            raise ConfigError(f"max_moves_per_cycle: must be a whole number >= 0, got {moves!r}")
        for name in ("heartbeat_interval_s", "rebalance_interval_s"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name}: must be > 0, got {getattr(self, name)}")
        ttl = self.lease_ttl_s
        if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 2:  # 2 s: etcd's minimum lease TTL
            raise ConfigError(f"lease_ttl_s (--lease-ttl): must be a whole number >= 2, got {ttl!r}")
        if (
            isinstance(self.restart_budget, bool)
            or not isinstance(self.restart_budget, int)
            or self.restart_budget < 0
        ):
            raise ConfigError(f"restart_budget: must be a whole number >= 0, got {self.restart_budget!r}")
        if self.cleanup_interval_s <= 0:
            raise ConfigError(f"cleanup_interval: must be longer than 0, got {self.cleanup_interval_s}")
        for name in ("cleanup_retention_s", "timeslot_lead_time_s"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name.removesuffix('_s')}: must be >= 0, got {getattr(self, name)}")
        webhook = self.scale_up_webhook
        if webhook is not None and not webhook.startswith(("http://", "https://")):
            raise ConfigError(
                f'scale_up_webhook (--scale-up-webhook): expected an http(s) URL, got "{webhook}"'
            )
        if self.decide_in not in DECIDE_IN_CHOICES:
            raise ConfigError(
                f'decide_in (--decide-in): expected {" | ".join(DECIDE_IN_CHOICES)}, got "{self.decide_in}"'
            )
        if self.log_format not in ("console", "json"):
            raise ConfigError(f'log_format: expected console or json, got "{self.log_format}"')
        if self.log_level not in LOG_LEVELS:
            raise ConfigError(
                f'log_level (--log-level): expected {", ".join(LOG_LEVELS)}, got "{self.log_level}"'
            )
