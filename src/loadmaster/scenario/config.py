"""The ``config`` block: which actions run, scoring strategy and profile, eviction bounds, license tiers.

Every field is optional; an absent one takes ``SchedulerConfig``'s default (one source of truth).
Beyond the spec, ``max_consolidation_moves`` and ``backfill_depth`` (integers >= 0) are accepted.
"""

from __future__ import annotations

from typing import Any

from loadmaster.core.model import DEFAULT_ACTIONS, PROFILES, STRATEGIES, SchedulerConfig
from loadmaster.scenario.errors import ScenarioError, did_you_mean
from loadmaster.scenario.fields import (
    as_choice,
    as_duration_s,
    as_int,
    as_list,
    as_mapping,
    as_name,
    as_number,
    check_keys,
)

KNOWN_ACTIONS: tuple[str, ...] = DEFAULT_ACTIONS

_CONFIG_FIELDS = frozenset(
    {
        "actions",
        "strategy",
        "profile",
        "staleness_grace_period",
        "max_eviction_ratio",
        "license_tiers",
        "max_consolidation_moves",
        "backfill_depth",
    }
)


def _actions(value: object, path: str) -> tuple[str, ...]:
    names: list[str] = []
    for index, item in enumerate(as_list(value, path)):
        item_path = f"{path}[{index}]"
        if type(item) is not str:
            raise ScenarioError(item_path, "expected an action name, one of " + ", ".join(KNOWN_ACTIONS))
        if item not in KNOWN_ACTIONS:
            raise ScenarioError(
                item_path,
                f'unknown action "{item}": expected one of {", ".join(KNOWN_ACTIONS)}'
                + did_you_mean(item, KNOWN_ACTIONS),
            )
        names.append(item)
    return tuple(names)


def _license_tiers(value: object, path: str) -> tuple[str, ...]:
    tiers: list[str] = []
    for index, item in enumerate(as_list(value, path)):
        tier = as_name(item, f"{path}[{index}]")
        if tier in tiers:
            raise ScenarioError(f"{path}[{index}]", f'duplicate license tier "{tier}"')
        tiers.append(tier)
    if not tiers:
        raise ScenarioError(path, "needs at least one tier (lowest first)")
    return tuple(tiers)


def as_config(value: object, path: str = "config") -> SchedulerConfig:
    mapping: dict[Any, Any] = as_mapping(value, path)
    check_keys(mapping, _CONFIG_FIELDS, path)
    given: dict[str, Any] = {}
    if (actions := mapping.get("actions")) is not None:
        given["actions"] = _actions(actions, f"{path}.actions")
    if (strategy := mapping.get("strategy")) is not None:
        given["strategy"] = as_choice(strategy, f"{path}.strategy", STRATEGIES)
    if (profile := mapping.get("profile")) is not None:
        given["profile"] = as_choice(profile, f"{path}.profile", PROFILES)
    if (grace := mapping.get("staleness_grace_period")) is not None:
        given["staleness_grace_period_s"] = as_duration_s(grace, f"{path}.staleness_grace_period")
    if (ratio := mapping.get("max_eviction_ratio")) is not None:
        given["max_eviction_ratio"] = as_number(ratio, f"{path}.max_eviction_ratio", minimum=0)
    if (tiers := mapping.get("license_tiers")) is not None:
        given["license_tiers"] = _license_tiers(tiers, f"{path}.license_tiers")
    if (moves := mapping.get("max_consolidation_moves")) is not None:
        given["max_consolidation_moves"] = as_int(moves, f"{path}.max_consolidation_moves", minimum=0)
    if (depth := mapping.get("backfill_depth")) is not None:
        given["backfill_depth"] = as_int(depth, f"{path}.backfill_depth", minimum=0)
    return SchedulerConfig(**given)
