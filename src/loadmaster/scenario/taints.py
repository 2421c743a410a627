"""Node taints and task tolerations.

Defaults (spec "Filters"): an omitted taint or toleration ``value`` is the empty string, an omitted
taint ``effect`` is NoSchedule (the only effect that keeps new tasks away without evicting), an
omitted toleration ``operator`` is Equal and an omitted toleration ``effect`` matches every effect.
What a toleration may not combine is ``fields.tolerations``' (shared with the manifests).
"""

from __future__ import annotations

from typing import cast

from loadmaster.core.model import (
    DEFAULT_TAINT_EFFECT,
    TAINT_EFFECTS,
    TOLERATION_OPERATORS,
    Taint,
    TaintEffect,
    Toleration,
    TolerationOperator,
)
from loadmaster.fields.tolerations import toleration_problem
from loadmaster.scenario.errors import ScenarioError
from loadmaster.scenario.fields import as_choice, as_mapping, as_name, check_keys, label_text, require

_TAINT_FIELDS = frozenset({"key", "value", "effect"})
_TOLERATION_FIELDS = frozenset({"key", "operator", "value", "effect"})


def as_taint(value: object, path: str) -> Taint:
    mapping = as_mapping(value, path)
    check_keys(mapping, _TAINT_FIELDS, path)
    text = mapping.get("value")
    effect = mapping.get("effect")
    return Taint(
        key=as_name(require(mapping, "key", path), f"{path}.key"),
        value="" if text is None else label_text(text, f"{path}.value"),
        effect=DEFAULT_TAINT_EFFECT
        if effect is None
        else cast(TaintEffect, as_choice(effect, f"{path}.effect", TAINT_EFFECTS)),
    )


def as_toleration(value: object, path: str) -> Toleration:
    mapping = as_mapping(value, path)
    check_keys(mapping, _TOLERATION_FIELDS, path)
    raw_key, raw_operator = mapping.get("key"), mapping.get("operator")
    raw_value, raw_effect = mapping.get("value"), mapping.get("effect")
    key = None if raw_key is None else as_name(raw_key, f"{path}.key")
    operator = (
        "Equal"
        if raw_operator is None
        else cast(TolerationOperator, as_choice(raw_operator, f"{path}.operator", TOLERATION_OPERATORS))
    )
    text = "" if raw_value is None else label_text(raw_value, f"{path}.value")
    problem = toleration_problem(key, operator, text)
    if problem is not None:
        raise ScenarioError(f"{path}.{problem.field}", problem.message)
    effect = (
        None
        if raw_effect is None
        else cast(TaintEffect, as_choice(raw_effect, f"{path}.effect", TAINT_EFFECTS))
    )
    return Toleration(key=key, operator=operator, value=text, effect=effect)
