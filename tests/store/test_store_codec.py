"""The value codec: deterministic JSON bytes, faithful round trips, clear errors."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from loadmaster.store.codec import CodecError, decode, decode_as, encode

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
json_objects = st.dictionaries(st.text(), json_values, max_size=6)


@given(json_objects)
def test_every_json_object_survives_a_round_trip(value: dict[str, Any]) -> None:
    assert decode(encode(value)) == value


@given(json_objects)
def test_the_encoding_does_not_depend_on_key_insertion_order(value: dict[str, Any]) -> None:
    def reversed_order(item: Any) -> Any:
        if isinstance(item, dict):
            return {key: reversed_order(item[key]) for key in reversed(list(item))}
        if isinstance(item, list):
            return [reversed_order(element) for element in item]
        return item

    assert encode(reversed_order(value)) == encode(value)


@given(json_objects, st.sampled_from([float("nan"), float("inf"), float("-inf")]))
def test_a_non_finite_number_anywhere_is_refused(value: dict[str, Any], bad: float) -> None:
    with pytest.raises(CodecError, match=r"\$\.wrapper\[1\]\.bad is not a finite number"):
        encode({"wrapper": [value, {"bad": bad}]})


def test_values_are_compact_json_with_sorted_keys() -> None:
    data = encode({"b": 1, "a": {"d": [1, 2.5, None], "c": "é"}})
    assert data == b'{"a":{"c":"\xc3\xa9","d":[1,2.5,null]},"b":1}'
    assert json.loads(data) == {"a": {"c": "é", "d": [1, 2.5, None]}, "b": 1}


class Replica(msgspec.Struct):
    name: str
    cpu_millis: int
    node: str | None = None


def test_a_struct_is_stored_as_an_object_and_decoded_back_with_validation() -> None:
    data = encode(Replica("shop-api-3", 500))
    assert decode(data) == {"cpu_millis": 500, "name": "shop-api-3", "node": None}
    assert decode_as(data, Replica) == Replica("shop-api-3", 500)
    with pytest.raises(CodecError, match=r"Replica.*cpu_millis"):
        decode_as(b'{"name": "x", "cpu_millis": "lots"}', Replica)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param(
            {"spec": {"cpu": [1.0, float("nan")]}}, r"\$\.spec\.cpu\[1\] is not a finite number", id="nan"
        ),
        pytest.param({"weight": float("-inf")}, r"\$\.weight is not a finite number", id="infinity"),
        pytest.param(Replica("x", 1, node=None), None, id="struct-with-null-is-fine"),
        pytest.param({1: "x"}, "str keys", id="non-string-key"),
        pytest.param({"x": object()}, "unsupported", id="unknown-type"),
    ],
)
def test_values_json_cannot_hold_are_refused(value: Any, message: str | None) -> None:
    if message is None:
        assert decode(encode(value))["node"] is None
        return
    with pytest.raises(CodecError, match=message):
        encode(value)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(b"[1, 2]", "Expected `object`, got `array`", id="not-an-object"),
        pytest.param(b'{"a": ', "truncated", id="truncated"),
        pytest.param(b"\xff", "malformed", id="not-json"),
        pytest.param(b'{"a": {"b": 1e999}}', "Number out of range", id="number-out-of-range"),
    ],
)
def test_stored_bytes_that_are_not_an_object_are_refused(data: bytes, message: str) -> None:
    with pytest.raises(CodecError, match=message):
        decode(data)
