"""Store keys: what a valid key is, and the half-open key range a prefix covers.

Keys are compared as Python strings in every backend. For valid Unicode text, code-point order
equals UTF-8 byte order, which is how SQLite (BINARY collation) and etcd (byte keys) sort, so the
three backends list keys in the same order.
"""

from __future__ import annotations

_MAX_CODE_POINT = 0x10FFFF
_SURROGATES = range(0xD800, 0xE000)


def check_key(key: object, field: str = "key") -> str:
    """Return ``key`` if it is a storable key, else raise naming ``field``.

    A key is a non-empty ``str`` that encodes to UTF-8 (no lone surrogates), because SQLite and etcd
    store keys as UTF-8 bytes.
    """
    if not isinstance(key, str):
        raise TypeError(f"{field}: a key must be a str, got {type(key).__name__}")
    if not key:
        raise ValueError(f"{field}: a key must not be empty")
    try:
        key.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{field}: key {key!r} is not valid Unicode text ({exc.reason})") from exc
    return key


def check_prefix(prefix: object, field: str = "prefix") -> str:
    """Return ``prefix`` if it can select keys ("" selects every key), else raise naming ``field``."""
    if not isinstance(prefix, str):
        raise TypeError(f"{field}: a prefix must be a str, got {type(prefix).__name__}")
    if prefix:
        check_key(prefix, field)
    return prefix


def prefix_end(prefix: str) -> str | None:
    """The smallest string greater than every string that starts with ``prefix``; None if unbounded.

    Keys under ``prefix`` are exactly ``prefix <= key < prefix_end(prefix)``. The end is the prefix
    with its last character incremented (skipping the surrogate block, which no valid key contains);
    trailing U+10FFFF characters cannot be incremented, so they are dropped first. An empty prefix,
    or one made only of U+10FFFF, has no upper bound.
    """
    stripped = prefix.rstrip(chr(_MAX_CODE_POINT))
    if not stripped:
        return None
    successor = ord(stripped[-1]) + 1
    if successor in _SURROGATES:
        successor = _SURROGATES.stop
    return stripped[:-1] + chr(successor)
