"""Live queue accounting: propagation to ancestors, exact inverse, refusal of impossible releases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.queues import QueueTree, QueueUsage

from .trees import in_user_units, queue, tree_of, vec


def org_tree() -> QueueTree:
    return tree_of(
        queue("org"), queue("dept", "org"), queue("team-a", "dept"), queue("team-b", "dept"), queue("other")
    )


def test_allocating_to_a_leaf_counts_against_every_ancestor_only() -> None:
    tree = org_tree()
    usage = QueueUsage.empty(tree)
    usage.allocate(tree.index_of("team-a"), vec(tree, gpu=2, cpu=1), preemptible=True)
    for name in ("team-a", "dept", "org"):
        assert in_user_units(tree, usage.allocated, name) == {"cpu": 1, "gpu": 2}
    assert in_user_units(tree, usage.allocated, "team-b") == {}
    assert in_user_units(tree, usage.allocated, "other") == {}
    assert not usage.allocated_non_preemptible.any()


def test_non_preemptible_allocations_are_also_counted_separately() -> None:
    tree = org_tree()
    usage = QueueUsage.empty(tree)
    usage.allocate(tree.index_of("team-b"), vec(tree, gpu=1), preemptible=False)
    usage.allocate(tree.index_of("team-b"), vec(tree, gpu=2), preemptible=True)
    assert in_user_units(tree, usage.allocated, "org") == {"gpu": 3}
    assert in_user_units(tree, usage.allocated_non_preemptible, "org") == {"gpu": 1}


def test_release_is_the_exact_inverse_of_allocate() -> None:
    tree = org_tree()
    usage = QueueUsage.empty(tree)
    usage.allocate(tree.index_of("team-a"), vec(tree, gpu=1), preemptible=True)
    before = usage.copy()
    usage.allocate(tree.index_of("team-b"), vec(tree, gpu=0.5, memory=2**30), preemptible=False)
    usage.release(tree.index_of("team-b"), vec(tree, gpu=0.5, memory=2**30), preemptible=False)
    assert usage == before


@pytest.mark.parametrize(
    ("preemptible", "message"),
    [
        pytest.param(True, "releasing more than is allocated", id="more-than-allocated"),
        pytest.param(False, "releasing more than is allocated", id="non-preemptible-that-was-preemptible"),
    ],
)
def test_releasing_what_was_never_allocated_is_refused_and_changes_nothing(
    preemptible: bool, message: str
) -> None:
    tree = org_tree()
    usage = QueueUsage.empty(tree)
    usage.allocate(tree.index_of("team-a"), vec(tree, gpu=1), preemptible=True)
    before = usage.copy()
    request = vec(tree, gpu=2) if preemptible else vec(tree, gpu=1)
    with pytest.raises(ValueError, match=message):
        usage.release(tree.index_of("team-a"), request, preemptible=preemptible)
    assert usage == before


@pytest.mark.parametrize(
    ("leaf", "amounts", "error"),
    [
        pytest.param(99, np.zeros(3, dtype=np.int64), IndexError, id="unknown-queue"),
        pytest.param(0, np.zeros(2, dtype=np.int64), ValueError, id="wrong-shape"),
        pytest.param(0, np.array([0, 0, -1], dtype=np.int64), ValueError, id="negative-request"),
    ],
)
def test_malformed_allocations_are_refused(leaf: int, amounts: np.ndarray, error: type[Exception]) -> None:
    usage = QueueUsage.empty(org_tree())
    with pytest.raises(error):
        usage.allocate(leaf, amounts, preemptible=True)
    assert not usage.allocated.any()


def test_a_copy_is_independent_of_the_original() -> None:
    tree = org_tree()
    usage = QueueUsage.empty(tree)
    copy = usage.copy()
    copy.allocate(tree.index_of("other"), vec(tree, cpu=1), preemptible=False)
    assert not usage.allocated.any()
    assert not usage.allocated_non_preemptible.any()


operations = st.lists(
    st.tuples(
        st.sampled_from(["team-a", "team-b", "other"]),
        st.lists(st.integers(min_value=0, max_value=5000), min_size=3, max_size=3),
        st.booleans(),
    ),
    max_size=12,
)


@settings(max_examples=60)
@given(operations, st.randoms(use_true_random=False))
def test_releasing_every_allocation_in_any_order_restores_usage_exactly(
    steps: list[tuple[str, list[int], bool]], rng: object
) -> None:
    tree = org_tree()
    usage = QueueUsage.empty(tree)
    usage.allocate(tree.index_of("team-a"), vec(tree, cpu=3), preemptible=False)
    start = usage.copy()
    allocations = [
        (tree.index_of(name), np.array(amounts, dtype=np.int64), flag) for name, amounts, flag in steps
    ]
    for leaf, request, preemptible in allocations:
        usage.allocate(leaf, request, preemptible)
    assert np.all(usage.allocated >= usage.allocated_non_preemptible)
    rng.shuffle(allocations)  # type: ignore[attr-defined]
    for leaf, request, preemptible in allocations:
        usage.release(leaf, request, preemptible)
    assert usage == start
