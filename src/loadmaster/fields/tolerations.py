"""Toleration rules, refused as Kubernetes refuses them: an ``Exists`` toleration with a value (it would
be ignored, so the file surely means something else) and an ``Equal`` toleration without a key (it
could match nothing)."""

from __future__ import annotations

from typing import NamedTuple


class TolerationProblem(NamedTuple):
    field: str  # the toleration's field the problem is reported at
    message: str


def toleration_problem(key: str | None, operator: str, value: str) -> TolerationProblem | None:
    """Why a toleration with these fields (``operator`` Equal or Exists) is refused, or None."""
    if operator == "Exists" and value:
        return TolerationProblem("value", "operator Exists matches any value: it takes no value")
    if operator == "Equal" and key is None:
        return TolerationProblem("key", "required unless operator is Exists (which then matches every taint)")
    return None
