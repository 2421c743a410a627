"""The debounce spaces passes during a burst, briefly during a trickle, and never after an idle pass."""

from __future__ import annotations

import pytest

from loadmaster.runtime.plane.debounce import BURST_WRITES, SCHEDULER_TRICKLE_FRACTION, quiet_until


@pytest.mark.parametrize(
    ("written", "conflicts", "expected"),
    [
        pytest.param(0, 0, -float("inf"), id="an idle pass does not delay the next"),
        pytest.param(1, 0, 10.01, id="a trickle waits a fifth of the debounce"),
        pytest.param(BURST_WRITES - 1, 0, 10.01, id="just below a burst is still a trickle"),
        pytest.param(BURST_WRITES, 0, 10.05, id="a burst waits out the debounce from the pass's start"),
        pytest.param(1, 1, 10.05, id="a conflict means someone else is writing: coalesce"),
    ],
)
def test_the_next_pass_waits_according_to_what_this_one_wrote(
    written: int, conflicts: int, expected: float
) -> None:
    assert quiet_until(10.0, written, conflicts, 0.05, SCHEDULER_TRICKLE_FRACTION) == pytest.approx(expected)


@pytest.mark.parametrize("written", [0, 1, BURST_WRITES - 1])
def test_without_a_trickle_gap_only_a_burst_delays_the_next_pass(written: int) -> None:
    assert quiet_until(10.0, written, 0, 0.05) == -float("inf")
    assert quiet_until(10.0, BURST_WRITES, 0, 0.05) == pytest.approx(10.05)
