"""Reclaim invariants over random trees and usage (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.core.model import Queue
from loadmaster.queues import (
    QueueTree,
    QueueUsage,
    Reclaimer,
    VictimChunk,
    compute_fair_share,
    fits_reclaim_rules,
    may_reclaim_from,
)
from loadmaster.queues.hierarchy import IntArray

RESOURCES = ("cpu", "gpu")
small = st.integers(min_value=0, max_value=6000)


@st.composite
def reclaim_cases(draw: st.DrawFn) -> tuple[QueueTree, QueueUsage, IntArray, Reclaimer, list[VictimChunk]]:
    size = draw(st.integers(min_value=2, max_value=7))
    queues = []
    for i in range(size):
        # Two top-level queues at least, so the tree has two leaves: a reclaimer and a victim.
        parent = draw(st.one_of(st.none(), st.integers(min_value=0, max_value=i - 1))) if i > 1 else None
        queues.append(
            Queue(
                name=f"q{i}",
                parent=None if parent is None else f"q{parent}",
                deserved=draw(st.dictionaries(st.sampled_from(RESOURCES), small, max_size=2)),
                over_quota_weight=draw(st.sampled_from([0.0, 1.0, 2.0])),
            )
        )
    tree = QueueTree.build(queues, RESOURCES)
    usage = QueueUsage.empty(tree)
    for leaf in tree.leaves:
        usage.allocate(leaf, np.array([draw(small), draw(small)], dtype=np.int64), draw(st.booleans()))
    pending = np.array([[draw(small) for _ in range(tree.size)] for _ in RESOURCES], dtype=np.int64)
    total = np.array([draw(st.integers(0, 30_000)) for _ in RESOURCES], dtype=np.int64)
    fair = compute_fair_share(tree, total, usage.allocated + pending)
    reclaimer_leaf, victim_leaf = draw(st.permutations(tree.leaves))[:2]
    request = np.array([draw(small), draw(small)], dtype=np.int64)
    held = usage.allocated[:, victim_leaf]
    chunks = []
    for _ in range(draw(st.integers(1, 3))):
        chunk = np.array([draw(st.integers(0, int(x))) for x in held], dtype=np.int64)
        chunks.append(VictimChunk(victim_leaf, chunk))
    return tree, usage, fair, Reclaimer(reclaimer_leaf, request, draw(st.booleans())), chunks


@settings(max_examples=80)
@given(reclaim_cases())
def test_a_queue_at_or_below_deserved_and_fair_share_is_never_reclaimed_from(
    case: tuple[QueueTree, QueueUsage, IntArray, Reclaimer, list[VictimChunk]],
) -> None:
    tree, usage, fair, who, chunks = case
    _, victim = tree.leveled(who.queue, chunks[0].queue)
    held = usage.allocated[:, victim]
    governed = tree.deserved_set[:, victim]
    if np.all(held <= fair[:, victim]) and np.all(held[governed] <= tree.deserved[governed, victim]):
        assert fits_reclaim_rules(usage, tree, fair, who, chunks) is not None
        assert may_reclaim_from(usage, tree, fair, who, chunks[0].queue) is not None


@settings(max_examples=80)
@given(reclaim_cases())
def test_a_victim_queue_the_filter_refuses_is_refused_by_the_validator(
    case: tuple[QueueTree, QueueUsage, IntArray, Reclaimer, list[VictimChunk]],
) -> None:
    tree, usage, fair, who, chunks = case
    if may_reclaim_from(usage, tree, fair, who, chunks[0].queue) is not None:
        assert fits_reclaim_rules(usage, tree, fair, who, chunks) is not None


@settings(max_examples=40)
@given(reclaim_cases())
def test_validating_a_reclaim_changes_no_queue_state(
    case: tuple[QueueTree, QueueUsage, IntArray, Reclaimer, list[VictimChunk]],
) -> None:
    tree, usage, fair, who, chunks = case
    before, fair_before = usage.copy(), fair.copy()
    fits_reclaim_rules(usage, tree, fair, who, chunks)
    assert usage == before
    assert np.array_equal(fair, fair_before)
