"""Readers for the scenario's plain fields: each checks one YAML value and returns the model's value.

Every reader takes the YAML path of the value, used only to word a refusal (``ScenarioError``), and
checks types exactly (``type(v) is str``): YAML 1.2 gives ``true``/``false`` as booleans and ``yes``,
``on`` as strings, and a boolean is never accepted where a number is expected.

Conversions the format allows (the scenario loader's documented choices):

- Label-like values (labels, ``node_selector``, taint and toleration values, ``match_labels``,
  expression ``values``) must be strings in the model. A YAML boolean or number there becomes its YAML
  text: ``true`` -> ``"true"``, ``3`` -> ``"3"``, ``2.5`` -> ``"2.5"``. A float is written back in
  its shortest form, so ``0.10`` becomes ``"0.1"``: quote such values to keep them exactly.
- ``null`` (or an empty value) for an optional field means the field is absent: its default applies.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from loadmaster.core.limits import MAX_INTEGER, short_text
from loadmaster.core.resources import QuantityError, parse_bits_per_second, parse_duration_s
from loadmaster.scenario.errors import FILE_PATH, ScenarioError, did_you_mean, join_path

T = TypeVar("T")


class Named(Protocol):
    @property
    def name(self) -> str: ...


NamedT = TypeVar("NamedT", bound=Named)

_YAML_TYPE_NAMES = {
    dict: "mapping",
    list: "list",
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


def type_name(value: object) -> str:
    """The YAML word for a parsed value's type (``mapping``, ``list``, ``string``, ...)."""
    return _YAML_TYPE_NAMES.get(type(value), type(value).__name__)


def wrong_type(path: str, expected: str, value: object) -> ScenarioError:
    return ScenarioError(path, f"expected {expected}, got {type_name(value)}")


def as_mapping(value: object, path: str) -> dict[Any, Any]:
    if type(value) is not dict:
        raise wrong_type(path, "a mapping", value)
    return value


def as_list(value: object, path: str) -> list[Any]:
    if type(value) is not list:
        raise wrong_type(path, "a list", value)
    return value


def check_keys(mapping: dict[Any, Any], allowed: frozenset[str], path: str) -> None:
    """Refuse the first key (in document order) that is not a known field of this mapping."""
    if allowed.issuperset(mapping):  # the common case, checked in one C-level call
        return
    for key in mapping:
        if key not in allowed:
            if type(key) is not str:
                raise ScenarioError(
                    path or FILE_PATH, f"field names must be strings, got {type_name(key)} {key!r}"
                )
            raise ScenarioError(join_path(path, key), "unknown field" + did_you_mean(key, allowed))


def require(mapping: dict[Any, Any], key: str, path: str) -> object:
    """The value of a required field; absent and ``null`` are both refused."""
    value = mapping.get(key)
    if value is None:
        raise ScenarioError(join_path(path, key), "required field is missing")
    return value


def as_str(value: object, path: str) -> str:
    if type(value) is not str:
        raise wrong_type(path, "a string", value)
    return value


def as_name(value: object, path: str) -> str:
    """A non-empty string naming something (node, job, task, queue, pool, ...)."""
    if type(value) is not str:
        raise wrong_type(path, "a name (string)", value)
    if not value or value != value.strip():
        raise ScenarioError(path, f"bad name {value!r}: must be non-empty, without surrounding spaces")
    return value


def as_int(value: object, path: str, minimum: int = -MAX_INTEGER, maximum: int = MAX_INTEGER) -> int:
    """An integer in ``minimum..maximum``; unbounded fields still stay within +-2**53 (core.limits)."""
    if type(value) is not int:
        raise wrong_type(path, "an integer", value)
    if value < minimum:
        raise ScenarioError(path, f"must be at least {minimum}, got {short_text(value)}")
    if value > maximum:
        raise ScenarioError(path, f"must be at most {maximum}, got {short_text(value)}")
    return value


def as_number(value: object, path: str, minimum: float = -MAX_INTEGER) -> float:
    """A finite number of at least ``minimum`` and at most 2**53 (core.limits)."""
    if type(value) is not int and type(value) is not float:
        raise wrong_type(path, "a number", value)
    if value > MAX_INTEGER or value < minimum:  # compared before float(): a huge int overflows it
        bound = f"at most {MAX_INTEGER}" if value > MAX_INTEGER else f"at least {minimum:g}"
        raise ScenarioError(path, f"must be {bound}, got {short_text(value)}")
    number = float(value)
    if not math.isfinite(number):
        raise ScenarioError(path, f"must be a finite number, got {value}")
    return number


def as_bool(value: object, path: str) -> bool:
    if type(value) is not bool:
        raise wrong_type(path, "true or false", value)
    return value


def as_choice(value: object, path: str, choices: tuple[str, ...]) -> str:
    """One of a fixed set of words (an enum field such as ``state`` or ``effect``)."""
    if type(value) is not str:
        raise wrong_type(path, "one of " + ", ".join(choices), value)
    if value not in choices:
        raise ScenarioError(
            path, f'bad value "{value}": expected one of {", ".join(choices)}' + did_you_mean(value, choices)
        )
    return value


def label_text(value: object, path: str) -> str:
    """A label-like value as text; YAML booleans and numbers become their YAML text (module doc)."""
    kind = type(value)
    if kind is str:
        return value  # type: ignore[return-value]  # checked by the exact type test
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float and math.isfinite(value):  # type: ignore[arg-type]
        return repr(value)
    raise wrong_type(path, "a string (or a number or boolean, taken as text)", value)


def as_labels(value: object, path: str) -> dict[str, str]:
    """A ``{key: value}`` mapping of strings (labels, selectors)."""
    mapping = as_mapping(value, path)
    labels: dict[str, str] = {}
    for key, text in mapping.items():
        if type(key) is not str or not key:
            raise ScenarioError(path, f"label keys must be non-empty strings, got {type_name(key)} {key!r}")
        labels[key] = text if type(text) is str else label_text(text, join_path(path, key))
    return labels


def as_str_list(value: object, path: str) -> tuple[str, ...]:
    items = as_list(value, path)
    for index, item in enumerate(items):
        if type(item) is not str or not item:
            raise wrong_type(f"{path}[{index}]", "a non-empty string", item)
    return tuple(items)


def as_tuple(value: object, path: str, read_item: Callable[[object, str], T]) -> tuple[T, ...]:
    """A YAML list read item by item; each item's path is ``path[i]``."""
    return tuple(read_item(item, f"{path}[{index}]") for index, item in enumerate(as_list(value, path)))


def as_uniquely_named(
    value: object, path: str, read_item: Callable[[object, str], NamedT], noun: str
) -> tuple[NamedT, ...]:
    """A YAML list read item by item, whose items' names are unique: a repeated name is refused at its
    ``name``, saying where the first one is (``duplicate node name "n1" (first at nodes[0])``)."""
    items: list[NamedT] = []
    first_index: dict[str, int] = {}
    for index, item in enumerate(as_list(value, path)):
        read = read_item(item, f"{path}[{index}]")
        if read.name in first_index:
            raise ScenarioError(
                f"{path}[{index}].name",
                f'duplicate {noun} name "{read.name}" (first at {path}[{first_index[read.name]}])',
            )
        first_index[read.name] = index
        items.append(read)
    return tuple(items)


def as_duration_s(value: object, path: str) -> float:
    try:
        return parse_duration_s(value)
    except QuantityError as exc:
        raise ScenarioError(path, str(exc)) from exc


def as_bits_per_second(value: object, path: str) -> int:
    try:
        return parse_bits_per_second(value)
    except QuantityError as exc:
        raise ScenarioError(path, str(exc)) from exc
