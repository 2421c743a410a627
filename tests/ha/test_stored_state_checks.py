"""The safety checks the HA tests rely on do catch what they promise to: each broken state is named."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.ha.stored_state import StoredState, placement_problems
from tests.ha.workload import NODE_CAPACITY, REQUEST


def replica(name: str, node: str | None, phase: str = "Scheduled") -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase} | ({"node_ref": node} if node else {})
    return {"metadata": {"name": name}, "spec": {"resources": REQUEST}, "status": status}


def state(replicas: list[dict[str, Any]], bindings: dict[str, int] | None = None) -> StoredState:
    nodes = {name: {"spec": {"capacity": NODE_CAPACITY, "system_reserved": {}}} for name in ("a", "b")}
    by_name = {r["metadata"]["name"]: r for r in replicas}
    bound = Counter(bindings if bindings is not None else {name: 1 for name in by_name})
    return StoredState(by_name, nodes, set(), bound, [])


EIGHT_ON_A = [replica(f"r{i}", "a") for i in range(8)]  # 8 x 500m fills node a's 4 CPUs exactly


@pytest.mark.parametrize(
    ("stored", "problem"),
    [
        pytest.param(state([*EIGHT_ON_A, replica("r8", "a")]), "a over-committed on cpu: 4500 > 4000",
                     id="ninth-replica-on-a-full-node"),
        pytest.param(state(EIGHT_ON_A[:7]), "replicas missing: ['r7']", id="replica-lost"),
        pytest.param(state([*EIGHT_ON_A, replica("ghost", "b")]), "replicas nobody asked for: ['ghost']",
                     id="replica-nobody-asked-for"),
        pytest.param(state([*EIGHT_ON_A[:7], replica("r7", None, "Pending")]), "r7 is Pending, not Scheduled",
                     id="replica-left-pending"),
        pytest.param(state([*EIGHT_ON_A[:7], replica("r7", "c")]), "r7 is on unknown node 'c'",
                     id="replica-on-unknown-node"),
        pytest.param(state(EIGHT_ON_A, {**{f"r{i}": 1 for i in range(7)}, "r7": 2}),
                     "r7 was bound 2 times according to the audit log", id="decision-repeated"),
        pytest.param(state(EIGHT_ON_A, {f"r{i}": 1 for i in range(7)}),
                     "r7 was bound 0 times according to the audit log", id="decision-not-recorded"),
    ],
)  # fmt: skip
def test_a_broken_placement_is_reported_by_name(stored: StoredState, problem: str) -> None:
    expected = {f"r{i}" for i in range(8)}
    assert problem in placement_problems(stored, expected)


def test_a_full_but_sound_placement_has_no_problem() -> None:
    assert placement_problems(state(EIGHT_ON_A), {f"r{i}" for i in range(8)}) == []
