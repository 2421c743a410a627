"""What the node agent reads from a stored replica: who it is, how to start it, stop it and check it.

Work is keyed by ``spec.incarnation`` (unique per incarnation, docs/decisions.md "replacement") and by
the replica's name when it has none: a replica that moves from ``X.next`` to ``X`` keeps its
incarnation, so the agent keeps the same process. Defaults follow Docker's: stop with SIGTERM, wait 30 s;
healthcheck every 30 s, timeout 30 s, 3 retries, no start period.
"""

from __future__ import annotations

import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loadmaster.agent.runtime.protocol import LaunchSpec
from loadmaster.core.resources import CPU, MEMORY, MILLI, QuantityError, parse_duration_s, parse_quantity

DEFAULT_STOP_SIGNAL = "SIGTERM"
DEFAULT_STOP_GRACE_S = 30.0
DEFAULT_CHECK_INTERVAL_S = 30.0
DEFAULT_CHECK_TIMEOUT_S = 30.0
DEFAULT_CHECK_RETRIES = 3


def spec_of(replica: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = replica.get("spec")
    return spec if isinstance(spec, dict) else {}


def status_of(replica: Mapping[str, Any]) -> Mapping[str, Any]:
    status = replica.get("status")
    return status if isinstance(status, dict) else {}


def name_of(replica: Mapping[str, Any]) -> str:
    return str((replica.get("metadata") or {}).get("name", ""))


def key_of(replica: Mapping[str, Any]) -> str:
    """The incarnation when the replica has one, else its name."""
    incarnation = spec_of(replica).get("incarnation")
    return str(incarnation) if incarnation else name_of(replica)


def revision_of(replica: Mapping[str, Any]) -> str:
    """What a start is deduplicated by besides the key: a changed spec_hash supersedes a start."""
    return str(spec_of(replica).get("spec_hash", ""))


def is_job_task(replica: Mapping[str, Any]) -> bool:
    return spec_of(replica).get("owner_kind") == "Job"


def _seconds(value: object, default: float) -> float:
    if value is None:
        return default
    try:
        seconds = parse_duration_s(value)
    except QuantityError:
        return default
    # A negative grace "means the persisted value" (issue 15): the spec's own, i.e. the default here.
    return seconds if seconds >= 0 else default


def stop_settings(replica: Mapping[str, Any]) -> tuple[int, float]:
    """``(signal number, grace seconds)``: the ``status.stop`` order the leader writes with a
    Terminating replica when there is one, else the spec's ``stop_signal`` / ``stop_grace_period``."""
    order = status_of(replica).get("stop")
    if isinstance(order, dict) and order.get("signal"):
        number = getattr(signal, str(order["signal"]), signal.SIGTERM)
        return int(number), _seconds(order.get("grace_period_s"), DEFAULT_STOP_GRACE_S)
    spec = spec_of(replica)
    name = str(spec.get("stop_signal") or DEFAULT_STOP_SIGNAL)
    number = getattr(signal, name, signal.SIGTERM)
    return int(number), _seconds(spec.get("stop_grace_period"), DEFAULT_STOP_GRACE_S)


def launch_spec(
    replica: Mapping[str, Any], node: str, work_dir: Path, placement: Mapping[str, str] | None = None
) -> LaunchSpec:
    """How the runtime starts this replica; ValueError (one line) when it cannot be run at all.
    ``placement``: the variables its placement gives it (``placement_env.py``), over the spec's env."""
    spec = spec_of(replica)
    command = spec.get("command")
    if not command:
        image = spec.get("image")
        raise ValueError(f"image {image} without command: this node's process runtime runs commands only")
    resources = spec.get("resources") or {}
    memory = _quantity(MEMORY, resources.get(MEMORY))
    cpu = _quantity(CPU, resources.get(CPU))
    name = name_of(replica)
    return LaunchSpec(
        key=key_of(replica),
        replica=name,
        node=node,
        command=tuple(str(part) for part in command),
        env={**{str(k): str(v) for k, v in (spec.get("env") or {}).items()}, **(placement or {})},
        directory=work_dir / "replicas" / name,
        memory_bytes=memory,
        cpu=cpu / MILLI if cpu is not None else None,
    )


def _quantity(resource: str, value: object) -> int | None:
    if value is None:
        return None
    try:
        return parse_quantity(resource, value)
    except QuantityError:
        return None


@dataclass(frozen=True, slots=True)
class HealthPolicy:
    probe: str  # "command" | "http" | "tcp"
    target: Any  # the command (list), the URL, or the port
    interval_s: float
    timeout_s: float
    retries: int
    start_period_s: float


def health_policy(replica: Mapping[str, Any]) -> HealthPolicy | None:
    check = spec_of(replica).get("healthcheck")
    if not isinstance(check, dict):
        return None
    probe = next((p for p in ("command", "http", "tcp") if p in check), None)
    if probe is None:
        return None
    return HealthPolicy(
        probe=probe,
        target=check[probe],
        interval_s=_seconds(check.get("interval"), DEFAULT_CHECK_INTERVAL_S),
        timeout_s=_seconds(check.get("timeout"), DEFAULT_CHECK_TIMEOUT_S),
        retries=int(check.get("retries", DEFAULT_CHECK_RETRIES)),
        start_period_s=_seconds(check.get("start_period"), 0.0),
    )
