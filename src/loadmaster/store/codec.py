"""The value codec: stored objects (dicts of JSON types) to bytes and back, with msgspec.

Values are compact JSON with keys sorted at every level, so the same object always encodes to the
same bytes (stable diffs, byte-equal compares, readable with ``sqlite3`` or ``etcdctl``). msgspec
does this several times faster than the stdlib or pydantic (see reference/ecosystem.md); sorting
adds little, because only mappings are reordered.

``encode`` also accepts what msgspec encodes natively (msgspec Structs, dataclasses, tuples), so hot
paths can store typed records; ``decode`` always returns plain JSON types and ``decode_as`` decodes
and validates into a given type.
"""

from __future__ import annotations

import math
import re
from typing import Any, TypeVar

import msgspec

T = TypeVar("T")

_encoder = msgspec.json.Encoder(order="sorted")
_screen_encoder = msgspec.msgpack.Encoder()
# In msgpack a float is 0xcb plus its IEEE-754 float64 bytes; NaN and +-Infinity are exactly the
# floats whose 11 exponent bits are all ones, i.e. a first byte of 0x7f/0xff and a second of 0xf?.
_NON_FINITE_FLOAT64 = re.compile(rb"\xcb[\x7f\xff][\xf0-\xff]")
_object_decoder = msgspec.json.Decoder(dict[str, Any])
_typed_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}


class CodecError(ValueError):
    """A value that cannot be encoded or decoded; the message names the offending path."""


def _non_finite_path(value: object, path: str) -> str | None:
    """Path of the first NaN/Infinity float inside ``value``, or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    if isinstance(value, dict):
        for key, item in value.items():
            found = _non_finite_path(item, f"{path}.{key}")
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _non_finite_path(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def _may_hold_non_finite(value: object) -> bool:
    try:
        screened = _screen_encoder.encode(value)
    except (TypeError, ValueError):  # a type msgpack lacks but JSON has: let the exact walk decide
        return True
    return _NON_FINITE_FLOAT64.search(screened) is not None


def encode(value: object) -> bytes:
    """Encode a stored object to deterministic JSON bytes.

    Raises CodecError for types JSON cannot hold, non-string mapping keys, and NaN/Infinity (msgspec
    would silently write them as ``null``, so the object would not survive a round trip).
    """
    try:
        data = _encoder.encode(value)
    except (TypeError, ValueError) as exc:
        raise CodecError(f"cannot encode value: {exc}") from exc
    # NaN and Infinity are the only floats msgspec turns into null, so look only when a null is there:
    # first a cheap screen of the msgpack encoding (about 1 us; a match inside a string is possible
    # but only costs the exact walk), then the walk that finds the path.
    if b"null" in data and _may_hold_non_finite(value):
        bad = _non_finite_path(msgspec.to_builtins(value), "$")
        if bad is not None:
            raise CodecError(f"cannot encode value: {bad} is not a finite number (JSON has no NaN/Infinity)")
    return data


def decode(data: bytes) -> dict[str, Any]:
    """Decode bytes written by ``encode`` into a dict of JSON types; CodecError if they are not an object."""
    try:
        return _object_decoder.decode(data)
    except msgspec.DecodeError as exc:  # ValidationError is a subclass
        raise CodecError(f"cannot decode stored value: {exc}") from exc


def decode_as(data: bytes, type_: type[T]) -> T:
    """Decode bytes into ``type_`` (a msgspec Struct, dataclass, TypedDict...), validating on the way."""
    decoder = _typed_decoders.get(type_)
    if decoder is None:
        decoder = _typed_decoders[type_] = msgspec.json.Decoder(type_)
    try:
        result: T = decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise CodecError(f"cannot decode stored value as {getattr(type_, '__name__', type_)}: {exc}") from exc
    return result
