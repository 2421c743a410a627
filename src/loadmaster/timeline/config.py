"""A timeline's ``config:``: the control plane's timings and policies, the seeds' defaults when omitted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any

from loadmaster.core.search_backoff import SearchBackoff
from loadmaster.runtime.config_file import read_search_backoff
from loadmaster.scenario.errors import ScenarioError
from loadmaster.scenario.fields import as_bool, as_choice, as_duration_s, as_int, as_mapping, check_keys

NODE_LOSS_POLICIES = ("single_replica", "all", "none")
# The seeds' range for the pressure sampling interval (JACO H1).
NODE_STATUS_INTERVAL_RANGE_S = (5.0, 300.0)


@dataclass(frozen=True, slots=True)
class TimelineConfig:
    heartbeat_interval_s: float = 30.0
    not_ready_after_s: float = 90.0
    node_loss_policy: str = "single_replica"
    node_loss_wait_s: float = 30.0
    agent_down_wait_s: float = 30.0
    rollout_step_timeout_s: float = 60.0
    restart_budget: int = 3
    drain_timeout_s: float = 300.0
    debounce_s: float = 0.05
    safety_tick_s: float = 30.0
    safety_tick_enabled: bool = True  # false: watch-only (the server's setting of the same name)
    node_status_interval_s: float = 30.0
    rebalance_interval_s: float = 30.0
    staleness_grace_period_s: float = 60.0
    cleanup_interval_s: float = 3600.0
    cleanup_retention_s: float = 30 * 86400.0
    timeslot_lead_time_s: float = 35 * 60.0
    # the server's failed-search backoff (core/search_backoff.py), off unless set: our extension
    search_backoff: SearchBackoff = field(default_factory=SearchBackoff)


def _positive_duration(value: object, path: str) -> float:
    seconds = as_duration_s(value, path)
    if seconds <= 0:
        raise ScenarioError(path, f"must be longer than 0, got {value!r}")
    return seconds


def _status_interval(value: object, path: str) -> float:
    seconds = as_duration_s(value, path)
    low, high = NODE_STATUS_INTERVAL_RANGE_S
    if not low <= seconds <= high:
        raise ScenarioError(path, f"must be between 5s and 5m, got {value!r}")
    return seconds


_READERS: dict[str, Callable[[object, str], Any]] = {
    "heartbeat_interval": _positive_duration,
    "not_ready_after": _positive_duration,
    "node_loss_policy": lambda v, p: as_choice(v, p, NODE_LOSS_POLICIES),
    "node_loss_wait": as_duration_s,
    "agent_down_wait": as_duration_s,
    "rollout_step_timeout": _positive_duration,
    "restart_budget": lambda v, p: as_int(v, p, minimum=0),
    "drain_timeout": _positive_duration,
    "debounce": as_duration_s,
    "safety_tick": _positive_duration,
    "safety_tick_enabled": as_bool,
    "node_status_interval": _status_interval,
    "rebalance_interval": _positive_duration,
    "staleness_grace_period": as_duration_s,
    "cleanup_interval": _positive_duration,
    "cleanup_retention": as_duration_s,
    "timeslot_lead_time": as_duration_s,
    "search_backoff": read_search_backoff,
}
# The file's key -> the field: durations carry their unit in the field name.
_NOT_DURATIONS = ("node_loss_policy", "restart_budget", "safety_tick_enabled", "search_backoff")
_FIELD_OF = {key: key if key in _NOT_DURATIONS else f"{key}_s" for key in _READERS}
assert set(_FIELD_OF.values()) == {f.name for f in fields(TimelineConfig)}


def as_timeline_config(value: object, path: str) -> TimelineConfig:
    mapping = as_mapping(value, path)
    check_keys(mapping, frozenset(_READERS), path)
    changes = {_FIELD_OF[key]: _READERS[key](raw, f"{path}.{key}") for key, raw in mapping.items()}
    return replace(TimelineConfig(), **changes)
