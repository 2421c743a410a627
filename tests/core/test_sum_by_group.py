"""Queue usage sums task requests per leaf: the grouped sum equals summing one task at a time."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from loadmaster.core.columns.input_sums import sum_by_group


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 2**40), st.integers(0, 2**40)), max_size=40))
def test_grouped_sums_equal_one_task_at_a_time(tasks: list[tuple[int, int, int]]) -> None:
    groups = np.array([g for g, _, _ in tasks], dtype=np.int64)
    values = np.array([[a for _, a, _ in tasks], [b for _, _, b in tasks]], dtype=np.int64).reshape(2, -1)
    expected = np.zeros((5, 2), dtype=np.int64)
    np.add.at(expected, groups, values.T)
    assert np.array_equal(sum_by_group(values, groups, 5), expected)
