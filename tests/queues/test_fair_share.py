"""Fair share tables computed by hand (KAI's proportion plugin semantics, see shares.py/division.py)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

from loadmaster.core.model import Queue
from loadmaster.queues import compute_fair_share

from .trees import in_user_units, per_queue, queue, tree_of, vec


def shares_of(
    queues: list[Queue], total: Mapping[str, float], demand: Mapping[str, Mapping[str, float]], resource: str
) -> dict[str, float]:
    tree = tree_of(*queues)
    fair = compute_fair_share(tree, vec(tree, **total), per_queue(tree, demand))
    return {q.name: in_user_units(tree, fair, q.name).get(resource, 0) for q in queues}


def gpus(**amounts: float) -> dict[str, dict[str, float]]:
    return {name.replace("_", "-"): {"gpu": value} for name, value in amounts.items()}


@pytest.mark.parametrize(
    ("queues", "total", "demand", "expected"),
    [
        pytest.param(
            [queue("a", deserved={"gpu": 1}), queue("b", deserved={"gpu": 1}), queue("c", weight=2)],
            6,
            gpus(a=4, b=4, c=4),
            {"a": 2, "b": 2, "c": 2},
            id="deserved-first-then-leftover-by-weight",
        ),
        pytest.param(
            [queue("a", deserved={"gpu": 4}), queue("b", deserved={"gpu": 2})],
            8,
            gpus(a=1, b=5),
            {"a": 1, "b": 5},
            id="demand-below-deserved-bounds-the-share",
        ),
        pytest.param(
            [queue("a", limit={"gpu": 2}), queue("b")],
            8,
            gpus(a=6, b=6),
            {"a": 2, "b": 6},
            id="limit-caps-the-share-and-the-rest-goes-to-the-sibling",
        ),
        pytest.param(
            [queue("a", deserved={"gpu": 4}, limit={"gpu": 2}), queue("b")],
            6,
            gpus(a=5, b=5),
            {"a": 2, "b": 4},
            id="deserved-is-bounded-by-limit",
        ),
        pytest.param(
            [queue("a", deserved={"gpu": 1}, weight=0), queue("b")],
            6,
            gpus(a=5, b=2),
            {"a": 1, "b": 2},
            id="weight-zero-gets-nothing-above-deserved",
        ),
        pytest.param(
            [queue("a", priority=1), queue("b")],
            6,
            gpus(a=5, b=5),
            {"a": 5, "b": 1},
            id="higher-priority-is-served-first",
        ),
        pytest.param(
            [queue("a", weight=10), queue("b", priority=1)],
            4,
            gpus(a=4, b=4),
            {"a": 0, "b": 4},
            id="priority-beats-weight",
        ),
        pytest.param(
            [queue("a"), queue("b"), queue("c")],
            4,
            gpus(a=4, b=4, c=4),
            {"a": 2, "b": 1, "c": 1},
            id="whole-gpu-remainder-goes-to-the-oldest-on-equal-fractions",
        ),
        pytest.param(
            [queue("a"), queue("b", weight=2)],
            4,
            gpus(a=4, b=4),
            {"a": 1, "b": 3},
            id="remainder-goes-to-the-largest-fraction",
        ),
        pytest.param(
            [queue("a"), queue("b"), queue("c")],
            7,
            gpus(a=1, b=5, c=5),
            {"a": 1, "b": 3, "c": 3},
            id="what-a-satisfied-queue-leaves-is-divided-again",
        ),
        pytest.param(
            [queue("a"), queue("b")],
            2,
            gpus(a=0.5, b=3),
            {"a": 0.5, "b": 1.5},
            id="fractional-gpu-demand-and-fractional-remainder",
        ),
        pytest.param(
            [queue("a", deserved={"gpu": 3}), queue("b", deserved={"gpu": 3})],
            4,
            gpus(a=3, b=3),
            {"a": 3, "b": 3},
            id="deserved-may-over-commit-the-cluster",
        ),
        pytest.param(
            [queue("a", deserved={"gpu": 2}), queue("b")],
            4,
            gpus(b=1),
            {"a": 0, "b": 1},
            id="nothing-requested-nothing-shared",
        ),
    ],
)
def test_gpu_fair_share_matches_the_hand_computed_table(
    queues: list[Queue], total: float, demand: dict[str, dict[str, float]], expected: dict[str, float]
) -> None:
    assert shares_of(queues, {"gpu": total}, demand, "gpu") == expected


def test_cpu_shares_are_exact_to_the_millicore() -> None:
    queues = [queue("a"), queue("b"), queue("c")]
    demand = {name: {"cpu": 1} for name in "abc"}
    # 10m / 3 = 3.33m each: floors of 3m, the 1m left goes to the oldest.
    assert shares_of(queues, {"cpu": 0.010}, demand, "cpu") == {"a": 0.004, "b": 0.003, "c": 0.003}


def test_each_resource_is_divided_independently() -> None:
    queues = [queue("a", deserved={"gpu": 2}), queue("b")]
    demand = {"a": {"gpu": 4, "cpu": 1}, "b": {"gpu": 4, "cpu": 10}}
    tree = tree_of(*queues)
    fair = compute_fair_share(tree, vec(tree, gpu=4, cpu=8), per_queue(tree, demand))
    assert in_user_units(tree, fair, "a") == {"cpu": 1, "gpu": 3}
    assert in_user_units(tree, fair, "b") == {"cpu": 7, "gpu": 1}


def test_two_level_tree_divides_each_parents_share_among_its_children() -> None:
    tree = tree_of(
        queue("dept-1", deserved={"gpu": 4}),
        queue("team-a", "dept-1", deserved={"gpu": 1}),
        queue("team-b", "dept-1", weight=3),
        queue("dept-2", deserved={"gpu": 2}),
    )
    fair = compute_fair_share(tree, vec(tree, gpu=10), per_queue(tree, gpus(team_a=5, team_b=5, dept_2=6)))
    # Top: deserved 4 + 2, leftover 4 split 2/2. dept-1's 6: team-a deserved 1, leftover 5 by weights 1:3
    # = 1.25 / 3.75 -> floors 1 / 3, the last GPU to team-b's larger fraction.
    got = {name: in_user_units(tree, fair, name).get("gpu", 0) for name in tree.names}
    assert got == {"dept-1": 6, "team-a": 2, "team-b": 4, "dept-2": 4}


def test_three_level_tree_applies_limits_and_priorities_at_every_level() -> None:
    tree = tree_of(
        queue("org"),
        queue("dept-1", "org", limit={"gpu": 3}),
        queue("team-a", "dept-1"),
        queue("team-b", "dept-1"),
        queue("dept-2", "org", priority=1),
    )
    fair = compute_fair_share(tree, vec(tree, gpu=8), per_queue(tree, gpus(team_a=4, team_b=4, dept_2=2)))
    # org takes the 8 GPUs; dept-2 (priority 1) its 2, dept-1 its limit 3; dept-1's 3 = 1.5 + 1.5 -> 2 + 1.
    got = {name: in_user_units(tree, fair, name).get("gpu", 0) for name in tree.names}
    assert got == {"org": 8, "dept-1": 3, "team-a": 2, "team-b": 1, "dept-2": 2}


def test_demand_given_for_a_parent_queue_is_ignored() -> None:
    tree = tree_of(queue("dept"), queue("team", "dept"))
    demand = per_queue(tree, {"dept": {"gpu": 100}, "team": {"gpu": 1}})
    fair = compute_fair_share(tree, vec(tree, gpu=8), demand)
    assert in_user_units(tree, fair, "dept") == {"gpu": 1}


def test_huge_remainders_are_divided_in_a_number_of_steps_bounded_by_the_queues() -> None:
    tree = tree_of(*(queue(f"q{i}") for i in range(20)))
    demand = np.full((3, 20), 10**18, dtype=np.int64)
    fair = compute_fair_share(tree, np.array([10**15 + 7] * 3, dtype=np.int64), demand)
    assert fair.sum(axis=1).tolist() == [10**15 + 7] * 3


@pytest.mark.parametrize(
    ("total", "demand", "message"),
    [
        pytest.param(
            np.zeros(2, dtype=np.int64),
            np.zeros((3, 1), dtype=np.int64),
            "total: expected shape",
            id="total-wrong-shape",
        ),
        pytest.param(
            np.zeros(3, dtype=np.int64),
            np.zeros((3, 2), dtype=np.int64),
            "demand: expected shape",
            id="demand-wrong-shape",
        ),
        pytest.param(
            np.array([0, 0, -1], dtype=np.int64),
            np.zeros((3, 1), dtype=np.int64),
            "must not be negative",
            id="negative-total",
        ),
    ],
)
def test_malformed_inputs_are_refused(total: np.ndarray, demand: np.ndarray, message: str) -> None:
    tree = tree_of(queue("a"))
    with pytest.raises(ValueError, match=message):
        compute_fair_share(tree, total, demand)
