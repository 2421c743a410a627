"""Readers for placement constraints shared with the scenario format: taints, tolerations, selectors,
affinity, topology spread, runtime versions and volumes. Shapes are the scenario format's, and so are
the rules: the same ``fields`` checks the scenario reader makes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loadmaster.core.model import (
    LABEL_OPERATORS,
    SET_OPERATORS,
    TAINT_EFFECTS,
    TOLERATION_OPERATORS,
    WHEN_UNSATISFIABLE,
)
from loadmaster.core.resources import MEMORY
from loadmaster.fields.runtimes import specifier_problem, version_problem
from loadmaster.fields.selectors import MAX_PREFERRED_WEIGHT, MIN_PREFERRED_WEIGHT, expression_values_problem
from loadmaster.fields.tolerations import toleration_problem
from loadmaster.manifests.errors import Problems
from loadmaster.manifests.quantity_fields import quantity
from loadmaster.manifests.validation import (
    Reader,
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
    """Kubernetes' rules (``fields.tolerations``): an omitted key tolerates every taint only with Exists,
    which takes no value."""
    fields = {
        "key": text,
        "operator": one_of(*TOLERATION_OPERATORS),
        "value": _any_string,
        "effect": one_of(*TAINT_EFFECTS),
    }
    read = read_object(problems, path, value, fields)
    if isinstance(value, dict):
        problem = toleration_problem(read.get("key"), read.get("operator", "Equal"), read.get("value", ""))
        if problem is not None:
            problems.add(at(path, problem.field), problem.message)
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


def _label_expression(operators: tuple[str, ...]) -> Reader:
    """``{key, operator, values}`` with one of ``operators``; values checked by ``fields.selectors``."""
    fields = {"key": text, "operator": one_of(*operators), "values": list_of(_any_string)}

    def read(problems: Problems, path: str, value: object) -> dict[str, Any]:
        checked = read_object(problems, path, value, fields, required=("key", "operator"))
        operator = checked.get("operator")
        problem = expression_values_problem(operator, checked.get("values", [])) if operator else None
        if problem is not None:
            values_path = at(path, "values")
            if problem.position is not None:
                values_path = at(values_path, problem.position)
            problems.add(values_path, problem.message)
        return checked

    return read


# Node selectors compare numbers too; pod label selectors (topology spread) take set operators only.
label_expression = _label_expression(LABEL_OPERATORS)
label_selector = object_of(
    {"match_labels": string_map, "match_expressions": list_of(_label_expression(SET_OPERATORS))}
)

preferred_term = object_of(
    {
        "weight": integer(MIN_PREFERRED_WEIGHT, MAX_PREFERRED_WEIGHT),
        "match_labels": string_map,
        "match_expressions": list_of(label_expression),
    },
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


def _version_map(problem_of: Callable[[str], str | None]) -> Reader:
    def read(problems: Problems, path: str, value: object) -> dict[str, Any]:
        checked = string_map(problems, path, value)
        for component, written in checked.items():
            problem = problem_of(written) if isinstance(written, str) else None
            if problem is not None:
                problems.add(at(path, component), problem)
        return checked

    return read


# What a node's image supports (versions are PEP 440 versions) ...
node_runtime = object_of({"versions": _version_map(version_problem), "features": list_of(text)})
# ... and what a task needs from it (versions are PEP 440 specifier sets such as ">=2.7").
runtime_requirement = object_of({"versions": _version_map(specifier_problem), "features": list_of(text)})

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
