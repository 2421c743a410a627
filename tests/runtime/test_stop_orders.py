"""How a replica is told to stop: its own signal and grace, unless the caller asks for another grace."""

from __future__ import annotations

import pytest

from loadmaster.runtime.plane.stop_orders import stop_order


@pytest.mark.parametrize(
    ("spec", "grace_s", "expected"),
    [
        pytest.param(
            {}, -1.0, {"signal": "SIGTERM", "grace_period_s": 10.0}, id="nothing-declared-seeds-defaults"
        ),
        pytest.param(
            {"stop_signal": "SIGINT", "stop_grace_period": "2m"},
            -1.0,
            {"signal": "SIGINT", "grace_period_s": 120.0},
            id="negative-grace-means-the-persisted-value",
        ),
        pytest.param(
            {"stop_signal": "SIGINT", "stop_grace_period": "2m"},
            5.0,
            {"signal": "SIGINT", "grace_period_s": 5.0},
            id="an-explicit-grace-overrides-it",
        ),
    ],
)
def test_a_stop_order_uses_the_replicas_own_signal_and_grace(
    spec: dict[str, str], grace_s: float, expected: dict[str, object]
) -> None:
    assert stop_order(spec, grace_s) == expected
