"""The debounce spaces passes during a burst and never delays a trickle."""

from __future__ import annotations

import pytest

from loadmaster.runtime.debounce import BURST_WRITES, quiet_until


@pytest.mark.parametrize(
    ("written", "conflicts", "expected"),
    [
        pytest.param(0, 0, -float("inf"), id="an idle pass does not delay the next"),
        pytest.param(BURST_WRITES - 1, 0, -float("inf"), id="a trickle of binds is handled at once"),
        pytest.param(BURST_WRITES, 0, 10.05, id="a burst waits out the debounce from the pass's start"),
        pytest.param(1, 1, 10.05, id="a conflict means someone else is writing: coalesce"),
    ],
)
def test_the_next_pass_waits_only_after_a_burst(written: int, conflicts: int, expected: float) -> None:
    assert quiet_until(10.0, written, conflicts, 0.05) == pytest.approx(expected)
