"""Store keys and the key range of a prefix, which every backend's list and watch rely on."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loadmaster.store.keys import check_key, check_prefix, prefix_end

# Hypothesis text excludes lone surrogates by default, exactly like valid keys.
keyish = st.text(
    alphabet=st.sampled_from(["/", "a", "b", "\x00", "é", "\ud7ff", "\ue000", "\uffff", "\U0010ffff"])
)


def is_in_range(key: str, prefix: str) -> bool:
    end = prefix_end(prefix)
    return prefix <= key and (end is None or key < end)


@given(st.text(), st.text())
def test_the_prefix_range_holds_exactly_the_keys_that_start_with_the_prefix(prefix: str, key: str) -> None:
    assert is_in_range(key, prefix) == key.startswith(prefix)


@given(keyish, keyish)
def test_the_prefix_range_is_exact_around_the_awkward_code_points(prefix: str, key: str) -> None:
    assert is_in_range(key, prefix) == key.startswith(prefix)
    assert is_in_range(prefix + key, prefix)


@pytest.mark.parametrize(
    ("prefix", "end"),
    [
        pytest.param("/nodes/", "/nodes0", id="slash-becomes-zero"),
        pytest.param("", None, id="empty-prefix-is-unbounded"),
        pytest.param("a\U0010ffff", "b", id="maximal-last-character-is-dropped"),
        pytest.param("\U0010ffff\U0010ffff", None, id="all-maximal-is-unbounded"),
        pytest.param("a\ud7ff", "a\ue000", id="skips-the-surrogate-block"),
    ],
)
def test_prefix_end_examples(prefix: str, end: str | None) -> None:
    assert prefix_end(prefix) == end


@pytest.mark.parametrize(
    ("key", "error", "message"),
    [
        pytest.param("", ValueError, "must not be empty", id="empty"),
        pytest.param(b"/a", TypeError, "must be a str, got bytes", id="bytes"),
        pytest.param("/a\ud800", ValueError, "not valid Unicode", id="lone-surrogate"),
    ],
)
def test_invalid_keys_are_refused_naming_the_field(key: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=f"ops\\[3\\]\\.key: .*{message}"):
        check_key(key, "ops[3].key")


def test_an_empty_prefix_is_valid_but_an_empty_key_is_not() -> None:
    assert check_prefix("") == ""
    with pytest.raises(ValueError, match="key"):
        check_key("")


def test_a_fenced_txn_comparing_128_keys_is_too_large_on_every_backend() -> None:
    from loadmaster.store.interface import MAX_TXN_OPS, Fence, Put, TxnTooLargeError
    from loadmaster.store.txn_rules import validate_txn

    ops = [Put(f"/k/{i}", b"v", expect_revision=0) for i in range(MAX_TXN_OPS)]
    validate_txn(ops, None)  # 128 compares without a fence: allowed
    with pytest.raises(TxnTooLargeError, match="129 compares"):
        validate_txn(ops, Fence("/leader", 1))
