"""``ServerConfig``: everything ``loadmaster server`` (and ``loadmaster up``, and tests) can set."""

from __future__ import annotations

import logging
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path

from loadmaster.core.heartbeat import HEARTBEAT_FRESH_FOR
from loadmaster.core.limits import (
    DEFAULT_MAX_OBJECTS_PER_APPLY,
    DEFAULT_MAX_REPLICAS,
    MAX_INTEGER,
    AdmissionLimits,
)
from loadmaster.runtime.http_limits import HttpLimits
from loadmaster.runtime.plane.leader_etcd import DEFAULT_TTL_S
from loadmaster.runtime.plane.pass_loop import DEFAULT_DEBOUNCE_S, DEFAULT_SAFETY_TICK_S

DEFAULT_DATA_DIR = Path(".loadmaster")
DEFAULT_LISTEN = "127.0.0.1:7480"
# docs/api.md: apply bodies over 8 MiB are refused as too large before they are parsed.
DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
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
    # node remove: a replica whose replacement is not Running within this aborts it (--drain-timeout-s).
    drain_timeout_s: float = DEFAULT_DRAIN_TIMEOUT_S

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
        ttl = self.lease_ttl_s
        if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 2:  # 2 s: etcd's minimum lease TTL
            raise ConfigError(f"lease_ttl_s (--lease-ttl): must be a whole number >= 2, got {ttl!r}")
        if self.log_format not in ("console", "json"):
            raise ConfigError(f'log_format: expected console or json, got "{self.log_format}"')
        if self.log_level not in LOG_LEVELS:
            raise ConfigError(
                f'log_level (--log-level): expected {", ".join(LOG_LEVELS)}, got "{self.log_level}"'
            )
