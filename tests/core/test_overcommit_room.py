"""The room overcommit adds for opted-in tasks: floor(allocatable x factor) - allocatable, exactly."""

from __future__ import annotations

import numpy as np
import pytest

from loadmaster.core.model import Node
from loadmaster.core.overcommit import overcommit_room, overcommitted_amount


@pytest.mark.parametrize(
    ("amount", "factor", "stretched"),
    [
        pytest.param(10_000, 1.3, 13_000, id="a-decimal-factor-loses-no-unit-to-binary-rounding"),
        pytest.param(7_000, 1.5, 10_500, id="half-again"),
        pytest.param(3, 1.5, 4, id="rounds-down"),
        pytest.param(5_000, 1.0, 5_000, id="factor-one-is-no-change"),
    ],
)
def test_an_overcommitted_amount_is_the_floor_of_amount_times_factor(
    amount: int, factor: float, stretched: int
) -> None:
    assert overcommitted_amount(amount, factor) == stretched


def test_the_room_is_per_node_and_resource_and_zero_where_no_factor_is_declared() -> None:
    nodes = (
        Node("a", {}, {"cpu": 4000, "memory": 100}, overcommit={"cpu": 1.5, "memory": 1.0}),
        Node("b", {}, {"cpu": 4000, "memory": 100}),
        Node("c", {}, {"cpu": 2000, "memory": 100}, overcommit={"memory": 2.0}),
    )
    alloc = np.array([[4000, 4000, 2000], [100, 100, 100]], dtype=np.int64)
    room = overcommit_room(nodes, ("cpu", "memory"), alloc)
    assert room.tolist() == [[2000, 0, 0], [0, 0, 100]]
    assert not room.flags.writeable
