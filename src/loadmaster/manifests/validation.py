"""Path-carrying field checks: each reader validates one value, records problems, returns it normalized.

A reader has the signature ``reader(problems, path, value) -> normalized value``. It never raises for
bad input: it records a problem at ``path`` and returns its best effort, so the caller can keep going
and report every problem of a document at once. A document with any problem is refused as a whole,
which is why a best-effort value is never stored.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

from loadmaster.core.limits import MAX_INTEGER, short_text
from loadmaster.fields.ports import MAX_PORT, MIN_PORT
from loadmaster.manifests.errors import Problems

Reader = Callable[[Problems, str, Any], Any]

# RFC 1123 labels as Kubernetes uses them for object names, with '.' allowed as in DNS subdomains.
DNS_NAME_MAX = 63
_DNS_NAME = re.compile(r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$")
_LABEL_KEY = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_./-]*[A-Za-z0-9])?$")


def at(path: str, key: str | int) -> str:
    """``at("spec.services", 0)`` -> ``spec.services[0]``; ``at("spec", "ports")`` -> ``spec.ports``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def describe(value: object) -> str:
    """How a wrong value is shown in a message: its text and its YAML type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, str):
        return f'"{value}" (a string)'
    if isinstance(value, int | float):
        return f"{short_text(value)} (a number)"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def read_object(
    problems: Problems,
    path: str,
    value: object,
    fields: Mapping[str, Reader],
    required: Collection[str] = (),
) -> dict[str, Any]:
    """A mapping with a fixed set of fields: unknown fields and missing required ones are problems."""
    if not isinstance(value, dict):
        problems.add(path, f"expected a mapping, got {describe(value)}")
        return {}
    for key in value:
        if not isinstance(key, str):
            problems.add(path, f"field names must be strings, got {key!r}")
        elif key not in fields:
            problems.add(at(path, key), _unknown_field(key, fields))
    normalized: dict[str, Any] = {}
    for key, reader in fields.items():
        if key in value:
            normalized[key] = reader(problems, at(path, key), value[key])
        elif key in required:
            problems.add(at(path, key), "required")
    return normalized


def _unknown_field(key: str, fields: Collection[str]) -> str:
    close = difflib.get_close_matches(key, list(fields), n=1)
    return f"unknown field (did you mean {close[0]}?)" if close else "unknown field"


def object_of(fields: Mapping[str, Reader], required: Collection[str] = ()) -> Reader:
    def read(problems: Problems, path: str, value: object) -> dict[str, Any]:
        return read_object(problems, path, value, fields, required)

    return read


def list_of(item: Reader, *, non_empty: bool = False) -> Reader:
    def read(problems: Problems, path: str, value: object) -> list[Any]:
        if not isinstance(value, list):
            problems.add(path, f"expected a list, got {describe(value)}")
            return []
        if non_empty and not value:
            problems.add(path, "must not be empty")
        return [item(problems, at(path, index), element) for index, element in enumerate(value)]

    return read


def text(problems: Problems, path: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        problems.add(path, f"expected a non-empty string, got {describe(value)}")
        return str(value)
    return value


def string_list(problems: Problems, path: str, value: object) -> list[str]:
    """A non-empty list of non-empty strings (commands, GPU models)."""
    read: list[str] = list_of(text, non_empty=True)(problems, path, value)
    return read


def boolean(problems: Problems, path: str, value: object) -> bool:
    if not isinstance(value, bool):
        problems.add(path, f"expected true or false, got {describe(value)}")
        return False
    return value


def integer(minimum: int = -MAX_INTEGER, maximum: int = MAX_INTEGER) -> Reader:
    """An integer in ``minimum..maximum``; unbounded fields still stay within +-2**53 (core.limits)."""

    def read(problems: Problems, path: str, value: object) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            problems.add(path, f"expected an integer, got {describe(value)}")
            return 0
        if value < minimum:
            problems.add(path, f"must be at least {minimum}, got {short_text(value)}")
        if value > maximum:
            problems.add(path, f"must be at most {maximum}, got {short_text(value)}")
        return value

    return read


def number(minimum: float = -MAX_INTEGER) -> Reader:
    """A finite number of at least ``minimum`` and at most 2**53 (core.limits)."""

    def read(problems: Problems, path: str, value: object) -> float | int:
        if not isinstance(value, int | float) or isinstance(value, bool) or not _is_finite(value):
            problems.add(path, f"expected a number, got {describe(value)}")
            return 0
        if value < minimum:
            problems.add(path, f"must be at least {minimum:g}, got {short_text(value)}")
        if value > MAX_INTEGER:
            problems.add(path, f"must be at most {MAX_INTEGER}, got {short_text(value)}")
        return value

    return read


def _is_finite(value: float | int) -> bool:
    return isinstance(value, int) or math.isfinite(value)  # math.isfinite(int) overflows past 1e308


def one_of(*choices: str) -> Reader:
    def read(problems: Problems, path: str, value: object) -> str:
        if value not in choices:
            problems.add(path, f"expected one of {' | '.join(choices)}, got {describe(value)}")
            return str(value)
        return str(value)

    return read


def dns_name_problem(value: object, max_length: int = DNS_NAME_MAX) -> str | None:
    """Why ``value`` is not a DNS-safe name, or None when it is one."""
    if not isinstance(value, str):
        return f"expected a DNS-safe name, got {describe(value)}"
    if len(value) > max_length:
        return f'"{value}" is {len(value)} characters long; a name has at most {max_length}'
    if not _DNS_NAME.match(value):
        return (
            f"\"{value}\" is not DNS-safe: use lowercase letters, digits, '-' and '.', "
            "starting and ending with a letter or digit"
        )
    return None


def dns_name(problems: Problems, path: str, value: object) -> str:
    problem = dns_name_problem(value)
    if problem:
        problems.add(path, problem)
    return str(value)


def unique_dns_names(problems: Problems, path: str, value: object) -> list[str]:
    """A list of distinct DNS-safe names (``hosts``)."""
    names: list[str] = list_of(dns_name)(problems, path, value)
    _refuse_duplicates(problems, path, names, "name")
    return names


def _refuse_duplicates(problems: Problems, path: str, items: list[Any], noun: str) -> None:
    seen: set[Any] = set()
    for index, item in enumerate(items):
        if item in seen:
            problems.add(at(path, index), f"{noun} {item!r} is listed twice")
        seen.add(item)


def string_map(problems: Problems, path: str, value: object) -> dict[str, str]:
    """Labels, selectors and environment: string keys to string values (numbers must be quoted)."""
    if not isinstance(value, dict):
        problems.add(path, f"expected a mapping of strings, got {describe(value)}")
        return {}
    for key, item in value.items():
        if not isinstance(key, str) or not _LABEL_KEY.match(key):
            problems.add(path, f"bad key {key!r}: use letters, digits, '-', '_', '.' and '/'")
        elif not isinstance(item, str):
            problems.add(at(path, key), f"expected a string, got {describe(item)}; quote it")
    return dict(value)


def ports(problems: Problems, path: str, value: object) -> list[int]:
    """Host ports: integers 1..65535, each at most once."""
    listed: list[int] = list_of(integer(MIN_PORT, MAX_PORT))(problems, path, value)
    _refuse_duplicates(problems, path, listed, "port")
    return listed


def plain_json(problems: Problems, path: str, value: object) -> Any:
    """Server-owned free-form data: anything JSON can hold (string keys, finite numbers)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                problems.add(path, f"field names must be strings, got {key!r}")
            else:
                plain_json(problems, at(path, key), item)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            plain_json(problems, at(path, index), item)
    elif isinstance(value, float) and not math.isfinite(value):
        problems.add(path, f"expected a finite number, got {value!r}")
    elif not isinstance(value, str | int | float | bool) and value is not None:
        problems.add(path, f"unsupported value {describe(value)}")
    return value
