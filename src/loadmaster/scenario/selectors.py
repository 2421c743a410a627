"""Label selectors of a task: match expressions, preferred node affinity terms, topology spread.

Expression rules are ``fields.selectors``' (shared with the manifests). ``match_labels`` pairs
are kept sorted by key so that two tasks with the same selector written in another order are equal
(the scheduler groups identical tasks).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from loadmaster.core.model import (
    LABEL_OPERATORS,
    SET_OPERATORS,
    WHEN_UNSATISFIABLE,
    LabelExpression,
    LabelOperator,
    LabelSelector,
    PreferredTerm,
    TopologySpreadConstraint,
    WhenUnsatisfiable,
)
from loadmaster.fields.selectors import MAX_PREFERRED_WEIGHT, MIN_PREFERRED_WEIGHT, expression_values_problem
from loadmaster.scenario.errors import ScenarioError
from loadmaster.scenario.fields import (
    as_choice,
    as_int,
    as_labels,
    as_list,
    as_mapping,
    as_name,
    as_tuple,
    check_keys,
    label_text,
    require,
)

_EXPRESSION_FIELDS = frozenset({"key", "operator", "values"})
_SELECTOR_FIELDS = frozenset({"match_labels", "match_expressions"})
_TERM_FIELDS = frozenset({"weight", "match_labels", "match_expressions"})
_SPREAD_FIELDS = frozenset({"max_skew", "topology_key", "when_unsatisfiable", "label_selector"})


def as_match_labels(value: object, path: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(as_labels(value, path).items()))


def as_expression(value: object, path: str, operators: tuple[str, ...] = LABEL_OPERATORS) -> LabelExpression:
    """``{key, operator, values}``, checked against the operator's arity."""
    mapping = as_mapping(value, path)
    check_keys(mapping, _EXPRESSION_FIELDS, path)
    key = as_name(require(mapping, "key", path), f"{path}.key")
    operator = as_choice(require(mapping, "operator", path), f"{path}.operator", operators)
    raw_values = mapping.get("values")
    values_path = f"{path}.values"
    values: tuple[str, ...] = ()
    if raw_values is not None:
        values = tuple(
            label_text(item, f"{values_path}[{index}]")
            for index, item in enumerate(as_list(raw_values, values_path))
        )
    problem = expression_values_problem(operator, values)
    if problem is not None:
        at = values_path if problem.position is None else f"{values_path}[{problem.position}]"
        raise ScenarioError(at, problem.message)
    return LabelExpression(key=key, operator=cast(LabelOperator, operator), values=values)


def as_set_expression(value: object, path: str) -> LabelExpression:
    """An expression of a pod label selector (topology spread): no numeric comparisons (the spec's list)."""
    return as_expression(value, path, SET_OPERATORS)


def _selector_parts(
    mapping: dict[Any, Any], path: str, read_expression: Callable[[object, str], LabelExpression]
) -> tuple[tuple[tuple[str, str], ...], tuple[LabelExpression, ...]]:
    """A selector's (``match_labels``, ``match_expressions``), each empty when absent."""
    labels = mapping.get("match_labels")
    expressions = mapping.get("match_expressions")
    return (
        () if labels is None else as_match_labels(labels, f"{path}.match_labels"),
        () if expressions is None else as_tuple(expressions, f"{path}.match_expressions", read_expression),
    )


def as_label_selector(value: object, path: str) -> LabelSelector:
    """``{match_labels, match_expressions}`` over task labels (topology spread)."""
    mapping = as_mapping(value, path)
    check_keys(mapping, _SELECTOR_FIELDS, path)
    labels, expressions = _selector_parts(mapping, path, as_set_expression)
    return LabelSelector(match_labels=labels, match_expressions=expressions)


def as_preferred_term(value: object, path: str) -> PreferredTerm:
    """``{weight 1..100, match_labels, match_expressions}`` over node labels (soft)."""
    mapping = as_mapping(value, path)
    check_keys(mapping, _TERM_FIELDS, path)
    weight = as_int(
        require(mapping, "weight", path), f"{path}.weight", MIN_PREFERRED_WEIGHT, MAX_PREFERRED_WEIGHT
    )
    labels, expressions = _selector_parts(mapping, path, as_expression)
    return PreferredTerm(weight=weight, match_labels=labels, match_expressions=expressions)


def as_spread_constraint(value: object, path: str) -> TopologySpreadConstraint:
    mapping = as_mapping(value, path)
    check_keys(mapping, _SPREAD_FIELDS, path)
    when = mapping.get("when_unsatisfiable")
    selector = mapping.get("label_selector")
    return TopologySpreadConstraint(
        max_skew=as_int(require(mapping, "max_skew", path), f"{path}.max_skew", minimum=1),
        topology_key=as_name(require(mapping, "topology_key", path), f"{path}.topology_key"),
        when_unsatisfiable="DoNotSchedule"
        if when is None
        else cast(WhenUnsatisfiable, as_choice(when, f"{path}.when_unsatisfiable", WHEN_UNSATISFIABLE)),
        label_selector=LabelSelector()
        if selector is None
        else as_label_selector(selector, f"{path}.label_selector"),
    )
