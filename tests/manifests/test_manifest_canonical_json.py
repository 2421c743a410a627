"""canonical_json: msgspec's fast path writes exactly the bytes json.dumps wrote, so no stored hash moves."""

from __future__ import annotations

import hashlib
import json
import math
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.manifests import spec_hash
from loadmaster.manifests.replicas import canonical_json


def reference(value: Any) -> bytes:
    """What canonical_json was before msgspec: every stored spec_hash was computed from this text."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.encode("utf-8")


# Any text that is valid UTF-8 (no lone surrogates: neither encoder can write them, see below), with
# control characters, quotes, backslashes, U+2028 and characters beyond the BMP all likely to turn up.
texts = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
keys = texts | st.sampled_from(["", "a", "ab", "b", "\x7f", "\u00e9", "\uffff", "\U0001f600", "A", "_"])
floats = st.floats(allow_nan=False, allow_infinity=False)
big_ints = st.integers(-(2**80), 2**80) | st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63) - 1])


def json_values(scalars: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
        max_leaves=20,
    )


# What a normalized spec can hold (validation.plain_json): string keys, finite numbers, no other types.
spec_values = json_values(st.none() | st.booleans() | big_ints | floats | texts)
float_free_values = json_values(st.none() | st.booleans() | big_ints | texts)


@settings(max_examples=400)
@given(value=spec_values)
def test_canonical_json_writes_the_same_bytes_as_json_dumps_for_anything_a_spec_can_hold(value: Any) -> None:
    assert canonical_json(value) == reference(value)


@settings(max_examples=400)
@given(value=float_free_values)
def test_msgspec_sorted_encoding_equals_json_dumps_without_floats_which_is_why_the_fast_path_holds(
    value: Any,
) -> None:
    assert msgspec.json.Encoder(order="sorted").encode(value) == reference(value)


@pytest.mark.parametrize(
    ("value", "msgspec_text"),
    [
        pytest.param(1e16, b"1e16", id="positive-exponent"),
        pytest.param(1e-7, b"1e-7", id="negative-exponent"),
        pytest.param(1e-5, b"0.00001", id="exponent-threshold"),
        pytest.param(math.nan, b"null", id="nan-written-as-null"),
    ],
)
def test_msgspec_writes_some_floats_otherwise_so_floats_take_the_json_dumps_path(
    value: float, msgspec_text: bytes
) -> None:
    """If msgspec ever writes floats as json.dumps does, this fails and the fast path may take them."""
    assert msgspec.json.Encoder(order="sorted").encode({"f": value}) == b'{"f":' + msgspec_text + b"}"
    if math.isfinite(value):
        assert canonical_json({"f": value}) == reference({"f": value}) != b'{"f":' + msgspec_text + b"}"


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({"cpu": math.nan}, id="nan"),
        pytest.param({"limits": [1, {"cpu": math.inf}]}, id="nested-infinity"),
        pytest.param([-math.inf], id="negative-infinity"),
    ],
)
def test_nan_and_infinity_are_still_refused(value: Any) -> None:
    with pytest.raises(ValueError, match="not JSON compliant"):
        canonical_json(value)


@pytest.mark.parametrize(
    ("value", "error"),
    [
        pytest.param({"env": "\ud800"}, UnicodeEncodeError, id="lone-surrogate"),
        pytest.param({"at": datetime(2026, 1, 1, tzinfo=UTC)}, TypeError, id="datetime-json-lacks"),
        pytest.param({"ports": {80, 443}}, TypeError, id="set-json-lacks"),
    ],
)
def test_values_json_dumps_refused_are_still_refused(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        reference(value)
    with pytest.raises(error):
        canonical_json(value)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({2: "b", 10: "a"}, id="integer-keys-sorted-as-numbers"),
        pytest.param({"a": (1, 2)}, id="tuple"),
        pytest.param({"a": True, "b": [None, False, 0, -1, ""]}, id="booleans-none-and-zeros"),
    ],
)
def test_values_outside_a_normalized_spec_are_written_as_json_dumps_wrote_them(value: Any) -> None:
    assert canonical_json(value) == reference(value)


def test_a_spec_with_floats_keeps_the_hash_it_had_before_msgspec() -> None:
    spec = {"image": "a:1", "resources": {"cpu": 0.25, "gpu_memory": 1e16}, "weights": [1e-05, 2.5]}
    canonical = '{"image":"a:1","resources":{"cpu":0.25,"gpu_memory":1e+16},"weights":[1e-05,2.5]}'
    assert spec_hash(spec) == hashlib.sha256(canonical.encode()).hexdigest()


def test_a_spec_with_unicode_keeps_the_hash_it_had_before_msgspec() -> None:
    spec = {"image": "a:1", "env": {"GREETING": "h\u00e9llo \U0001f600", "TAB": "a\tb\x01"}}
    canonical = '{"env":{"GREETING":"h\u00e9llo \U0001f600","TAB":"a\\tb\\u0001"},"image":"a:1"}'
    assert spec_hash(spec) == hashlib.sha256(canonical.encode()).hexdigest()
