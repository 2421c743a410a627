"""Quantities near and beyond core.limits: parsed within the bound, or a QuantityError naming the limit."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loadmaster.core.resources import QuantityError, max_amount, parse_duration_s, parse_quantity

SUFFIXES = ("", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


@given(
    resource=st.sampled_from(["cpu", "memory", "gpu", "ingress_ip"]),
    mantissa=st.one_of(st.integers(min_value=0, max_value=10**50), st.floats(min_value=0, max_value=1e300)),
    exponent=st.integers(min_value=-60, max_value=10**9),
    suffix=st.sampled_from(SUFFIXES),
)
def test_a_quantity_is_within_its_bound_or_refused_naming_the_limit(
    resource: str, mantissa: float, exponent: int, suffix: str
) -> None:
    for value in (mantissa, f"{mantissa}e{exponent}{suffix}"):
        try:
            amount = parse_quantity(resource, value)
        except QuantityError as refused:
            assert "limit" in str(refused) or "bad quantity" in str(refused) or "milli-bytes" in str(refused)
            continue
        assert 0 <= amount <= max_amount(resource)


@pytest.mark.parametrize(
    ("resource", "value"),
    [
        pytest.param("cpu", "1e30", id="cpu-1e30"),
        pytest.param("memory", 1e30, id="memory-1e30"),
        pytest.param("cpu", 10**5000, id="a-5000-digit-int"),
        pytest.param("memory", "1e999999999Ki", id="an-exponent-decimal-cannot-hold"),
        pytest.param("cpu", "1000001", id="one-core-over"),
    ],
)
def test_a_quantity_beyond_the_bound_is_refused_with_the_limit(resource: str, value: object) -> None:
    with pytest.raises(QuantityError, match="above the limit"):
        parse_quantity(resource, value)


def test_a_duration_too_long_for_a_datetime_is_refused() -> None:
    with pytest.raises(QuantityError, match="above the limit"):
        parse_duration_s(10**400)
