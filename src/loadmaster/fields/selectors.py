"""Label selector rules: which values an expression's operator takes, and the weights of preferred terms.

Kubernetes' own validation: ``In``/``NotIn`` need at least one value, ``Exists``/``DoesNotExist`` take
none, ``Gt``/``Lt`` take exactly one integer, an integer being what the matcher can read as one
(``int(text)``, as ``core.labels`` and ``core.model.expression_holds`` do).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

# A preferred node affinity term's weight (Kubernetes' range).
MIN_PREFERRED_WEIGHT, MAX_PREFERRED_WEIGHT = 1, 100


class ValuesProblem(NamedTuple):
    """What is wrong with an expression's ``values``: ``position`` None for the list as a whole, else
    the position of the bad value."""

    position: int | None
    message: str


def is_integer_text(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def expression_values_problem(operator: str, values: Sequence[str]) -> ValuesProblem | None:
    """Why ``values`` do not suit ``operator`` (a known operator), or None."""
    if operator in ("In", "NotIn") and not values:
        return ValuesProblem(None, f"operator {operator} needs at least one value")
    if operator in ("Exists", "DoesNotExist") and values:
        return ValuesProblem(None, f"operator {operator} takes no values")
    if operator in ("Gt", "Lt"):
        if len(values) != 1:
            return ValuesProblem(None, f"operator {operator} needs exactly one integer value")
        if not is_integer_text(values[0]):
            return ValuesProblem(0, f'operator {operator} needs an integer, got "{values[0]}"')
    return None
