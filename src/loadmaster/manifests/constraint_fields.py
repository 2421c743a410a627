"""Readers for placement constraints shared with the scenario format: taints, tolerations, selectors,
affinity, topology spread, runtime versions and volumes. Shapes and rules are the scenario format's.
"""

from __future__ import annotations

from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from loadmaster.core.model import LABEL_OPERATORS, TAINT_EFFECTS, TOLERATION_OPERATORS, WHEN_UNSATISFIABLE
from loadmaster.core.resources import MEMORY
from loadmaster.manifests.errors import Problems
from loadmaster.manifests.quantity_fields import quantity
from loadmaster.manifests.validation import (
    at,
    boolean,
    describe,
    integer,
    list_of,
    object_of,
    one_of,
    read_object,
    string_map,
    text,
)


def toleration(problems: Problems, path: str, value: object) -> dict[str, Any]:
    """Kubernetes' rules: an omitted key tolerates every taint only with Exists, which takes no value."""
    fields = {
        "key": text,
        "operator": one_of(*TOLERATION_OPERATORS),
        "value": _any_string,
        "effect": one_of(*TAINT_EFFECTS),
    }
    read = read_object(problems, path, value, fields)
    operator = read.get("operator", "Equal")
    if "key" not in read and operator != "Exists" and isinstance(value, dict):
        problems.add(at(path, "operator"), "a toleration without key must use operator Exists")
    if operator == "Exists" and read.get("value"):
        problems.add(at(path, "value"), "operator Exists matches any value; remove value")
    return read


def _any_string(problems: Problems, path: str, value: object) -> str:
    if not isinstance(value, str):
        problems.add(path, f"expected a string, got {describe(value)}; quote it")
        return str(value)
    return value


# An omitted value is the empty string; an omitted effect is NoSchedule (the model's default).
taint = object_of(
    {"key": text, "value": _any_string, "effect": one_of(*TAINT_EFFECTS)},
    required=("key",),
)
taints = list_of(taint)


def label_expression(problems: Problems, path: str, value: object) -> dict[str, Any]:
    fields = {"key": text, "operator": one_of(*LABEL_OPERATORS), "values": list_of(_any_string)}
    read = read_object(problems, path, value, fields, required=("key", "operator"))
    operator, values = read.get("operator"), read.get("values", [])
    if operator in ("In", "NotIn") and not values:
        problems.add(at(path, "values"), f"operator {operator} needs at least one value")
    elif operator in ("Exists", "DoesNotExist") and values:
        problems.add(at(path, "values"), f"operator {operator} takes no values")
    elif operator in ("Gt", "Lt") and (len(values) != 1 or not _is_integer_text(values[0])):
        problems.add(at(path, "values"), f"operator {operator} needs exactly one integer value")
    return read


def _is_integer_text(value: object) -> bool:
    return isinstance(value, str) and value.strip().lstrip("+-").isdigit()


label_selector = object_of({"match_labels": string_map, "match_expressions": list_of(label_expression)})

preferred_term = object_of(
    {"weight": integer(1, 100), "match_labels": string_map, "match_expressions": list_of(label_expression)},
    required=("weight",),
)

topology_spread_constraint = object_of(
    {
        "max_skew": integer(1),
        "topology_key": text,
        "when_unsatisfiable": one_of(*WHEN_UNSATISFIABLE),
        "label_selector": label_selector,
    },
    required=("max_skew", "topology_key"),
)


def _version_map(parse: Any, what: str) -> Any:
    def read(problems: Problems, path: str, value: object) -> dict[str, Any]:
        checked = string_map(problems, path, value)
        for component, written in checked.items():
            if isinstance(written, str):
                try:
                    parse(written)
                except (InvalidVersion, InvalidSpecifier):
                    problems.add(at(path, component), f'bad {what} "{written}"')
        return checked

    return read


# What a node's image supports (versions are PEP 440 versions) ...
node_runtime = object_of({"versions": _version_map(Version, "version (PEP 440)"), "features": list_of(text)})
# ... and what a task needs from it (versions are PEP 440 specifier sets such as ">=2.7").
runtime_requirement = object_of(
    {
        "versions": _version_map(SpecifierSet, "version specifier (PEP 440, e.g. '>=2.7')"),
        "features": list_of(text),
    }
)

volume_claim = object_of(
    {"match_labels": string_map, "size": quantity(MEMORY), "ephemeral": boolean},
    required=("size",),
)


def volume_pools(problems: Problems, path: str, value: object) -> list[Any]:
    """A node's volume pools; pool names are unique within the node."""
    pool = object_of(
        {"name": text, "labels": string_map, "size": quantity(MEMORY)}, required=("name", "size")
    )
    read: list[Any] = list_of(pool)(problems, path, value)
    seen: set[str] = set()
    for index, item in enumerate(read):
        name = item.get("name")
        if name in seen:
            problems.add(at(at(path, index), "name"), f'pool "{name}" is listed twice')
        if isinstance(name, str):
            seen.add(name)
    return read
