"""Resource quantities in a scenario, parsed by ``core.resources`` and cached.

A large file repeats a handful of quantities ("2Gi", 1, "500m") tens of thousands of times; a parse
through ``Decimal`` costs microseconds, a cache hit a tenth of that. The cache key carries the exact
type of the value (``typed=True``) so that ``true`` can never hit the entry of ``1``; failures are not
cached and raise every time.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from loadmaster.core.resources import MEMORY, QuantityError, parse_quantity, validate_resource_name
from loadmaster.scenario.errors import ScenarioError, join_path
from loadmaster.scenario.fields import as_mapping, type_name

# Distinct (resource, text) pairs kept; a file rarely has more than a few hundred.
QUANTITY_CACHE_SIZE = 8192


@lru_cache(maxsize=QUANTITY_CACHE_SIZE, typed=True)
def _canonical(resource: str, value: str | int | float) -> int:
    validate_resource_name(resource)
    return parse_quantity(resource, value)


def as_quantity(resource: object, value: object, path: str) -> int:
    """One quantity in canonical units (millicores, bytes, milli-devices; see core.resources)."""
    kind = type(value)
    try:
        if type(resource) is str and (kind is str or kind is int or kind is float):
            return _canonical(resource, value)
        if type(resource) is not str:
            validate_resource_name(resource)  # raises: names must be strings
        if value is None:
            raise QuantityError("expected a quantity, got null")
        raise QuantityError(f"expected a quantity (a number or a string like '2Gi'), got {type_name(value)}")
    except QuantityError as exc:
        raise ScenarioError(path, str(exc)) from exc


def as_resources(value: object, path: str) -> dict[str, int]:
    """A ``{resource: quantity}`` mapping; a refusal names the resource, e.g. ``request.memory``."""
    mapping: dict[Any, Any] = as_mapping(value, path)
    parsed: dict[str, int] = {}
    for name, quantity in mapping.items():
        kind = type(quantity)
        # Inlined fast path of as_quantity: this loop runs for every resource of every node and task.
        if type(name) is str and (kind is str or kind is int or kind is float):
            try:
                parsed[name] = _canonical(name, quantity)
                continue
            except QuantityError as exc:
                raise ScenarioError(join_path(path, name), str(exc)) from exc
        parsed[name] = as_quantity(name, quantity, join_path(path, name))
    return parsed


def as_memory_bytes(value: object, path: str) -> int:
    """A size in bytes (volume and image sizes are memory quantities: ``500Gi``, ``800Mi``)."""
    return as_quantity(MEMORY, value, path)
