"""The incremental queue walk (``queues.tournament``) returns what the from-scratch walk returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.core.model import Queue
from loadmaster.queues import QueueTree, QueueUsage, next_leaf, next_victim_leaf
from loadmaster.queues.hierarchy import IntArray
from loadmaster.queues.tournament import QueueTournament

from .test_queue_ordering import FAIR, two_departments
from .trees import per_queue, usage_with, vec

RESOURCES = ("cpu", "gpu")
# few distinct values, so that standings often tie and the age order has to decide
units = st.integers(min_value=0, max_value=4).map(lambda n: n * 1000)
amounts = st.tuples(units, units).map(lambda pair: np.array(pair, dtype=np.int64))


@st.composite
def trees(draw: st.DrawFn) -> QueueTree:
    queues = []
    for i in range(draw(st.integers(min_value=1, max_value=9))):
        # any earlier queue or none, each as likely: trees three or four levels deep are common
        parent = draw(st.sampled_from([None, *range(i)]))
        queues.append(
            Queue(
                name=f"q{i}",
                parent=None if parent is None else f"q{parent}",
                priority=draw(st.integers(min_value=0, max_value=1)),
                deserved=draw(st.dictionaries(st.sampled_from(RESOURCES), units, max_size=2)),
                limit=draw(st.dictionaries(st.sampled_from(RESOURCES), units, max_size=2)),
            )
        )
    return QueueTree.build(queues, RESOURCES)


# One step of a session: a leaf's offer changes, usage is charged, a charge is released (an eviction),
# the Statement checkpoints or rolls back (every charge since the checkpoint undone, newest first), or
# the action asks for the next leaf.
steps = st.one_of(
    st.tuples(st.just("offer"), st.integers(0, 99), st.one_of(st.none(), amounts)),
    st.tuples(st.just("allocate"), st.integers(0, 99), amounts, st.booleans()),
    st.tuples(st.just("evict"), st.integers(0, 99)),
    st.tuples(st.just("checkpoint")),
    st.tuples(st.just("rollback")),
    st.tuples(st.just("walk")),
)


@dataclass
class Replay:
    """Applies steps to a usage, a tournament and the offers the from-scratch walk is given."""

    tree: QueueTree
    fair: IntArray
    usage: QueueUsage
    walk: QueueTournament
    as_victims: bool
    offers: dict[int, IntArray] = field(default_factory=dict)
    charges: list[tuple[int, IntArray, bool, int]] = field(default_factory=list)  # leaf, amount, flag, sign
    checkpoints: list[int] = field(default_factory=list)

    def apply(self, step: tuple[object, ...]) -> None:
        leaves = self.tree.leaves
        match step:
            case ("offer", int(i), offer):
                leaf = leaves[i % len(leaves)]
                self.walk.set_offer(leaf, offer)  # type: ignore[arg-type]
                if offer is None:
                    self.offers.pop(leaf, None)
                else:
                    self.offers[leaf] = offer  # type: ignore[assignment]
            case ("allocate", int(i), amount, bool(preemptible)):
                self.shift(leaves[i % len(leaves)], amount, preemptible, +1)  # type: ignore[arg-type]
            case ("evict", int(i)):
                held = [c for c in self.charges if c[3] > 0]
                if held:
                    leaf, amount, preemptible, _ = held[i % len(held)]
                    if (self.usage.allocated[:, leaf] >= amount).all():
                        self.shift(leaf, amount, preemptible, -1)
            case ("checkpoint",):
                self.checkpoints.append(len(self.charges))
            case ("rollback",):
                mark = self.checkpoints.pop() if self.checkpoints else 0
                while len(self.charges) > mark:
                    leaf, amount, preemptible, sign = self.charges.pop()
                    self.usage.shift(leaf, amount, preemptible, -sign)
            case ("walk",):
                assert self.walk.winner(self.usage) == self.from_scratch()

    def shift(self, leaf: int, amount: IntArray, preemptible: bool, sign: int) -> None:
        self.usage.shift(leaf, amount, preemptible, sign)
        self.charges.append((leaf, amount, preemptible, sign))

    def from_scratch(self) -> int | None:
        walk = next_victim_leaf if self.as_victims else next_leaf
        return walk(self.tree, self.usage, self.fair, self.offers)


@settings(max_examples=150)
@given(
    tree=trees(),
    data=st.data(),
    as_victims=st.booleans(),
    script=st.lists(st.tuples(steps, st.booleans()), max_size=40),
)
def test_the_incremental_walk_equals_the_walk_from_scratch_after_any_sequence_of_changes(
    tree: QueueTree, data: st.DataObject, as_victims: bool, script: list[tuple[tuple[object, ...], bool]]
) -> None:
    fair_share = np.array([[data.draw(units) for _ in range(tree.size)] for _ in RESOURCES], dtype=np.int64)
    replay = Replay(tree, fair_share, QueueUsage.empty(tree),
                    QueueTournament(tree, fair_share, as_victims=as_victims), as_victims)  # fmt: skip
    # most leaves start with usage and an offer, so that most walks compare several queues
    for i in range(len(tree.leaves)):
        replay.apply(("allocate", i, data.draw(amounts), data.draw(st.booleans())))
        replay.apply(("offer", i, data.draw(st.one_of(st.none(), amounts, amounts))))
    for step, then_walk in script:  # several changes between two walks, or a walk after each
        replay.apply(step)
        if then_walk:
            replay.apply(("walk",))
    replay.apply(("walk",))


def test_an_eviction_in_another_department_changes_the_next_leaf() -> None:
    tree = two_departments()
    fair = per_queue(tree, FAIR)
    usage = usage_with(tree, {"team-a": {"gpu": 2}, "team-c": {"gpu": 3}})
    walk = QueueTournament(tree, fair)
    for name in ("team-a", "team-c"):
        walk.set_offer(tree.index_of(name), vec(tree, gpu=1))
    # dept-1 would hold 3/4 with the job, dept-2 4/4: team-a goes first
    assert walk.winner(usage) == tree.index_of("team-a")
    usage.release(tree.index_of("team-c"), vec(tree, gpu=2), preemptible=True)
    # the walk was not told: it sees the release in the usage itself (dept-2 now 2/4 with the job)
    assert walk.winner(usage) == tree.index_of("team-c")


def test_a_change_undone_after_a_walk_is_seen_by_the_next_walk() -> None:
    tree = two_departments()
    usage = usage_with(tree, {"team-a": {"gpu": 2}, "team-c": {"gpu": 3}})
    walk = QueueTournament(tree, per_queue(tree, FAIR))
    for name in ("team-a", "team-c"):
        walk.set_offer(tree.index_of(name), vec(tree, gpu=1))
    assert walk.winner(usage) == tree.index_of("team-a")
    released = vec(tree, gpu=2)
    usage.release(tree.index_of("team-c"), released, preemptible=True)
    assert walk.winner(usage) == tree.index_of("team-c")
    # a rollback: usage is back at the first walk's, and differs from the last walk's
    usage.allocate(tree.index_of("team-c"), released, preemptible=True)
    assert walk.winner(usage) == tree.index_of("team-a")


def test_a_leaf_without_an_offer_is_skipped_and_no_offers_mean_no_leaf() -> None:
    tree = two_departments()
    usage = usage_with(tree, {})
    walk = QueueTournament(tree, per_queue(tree, FAIR))
    walk.set_offer(tree.index_of("team-b"), vec(tree, gpu=1))
    assert walk.winner(usage) == tree.index_of("team-b")
    walk.set_offer(tree.index_of("team-b"), None)
    assert walk.winner(usage) is None


@pytest.mark.parametrize(
    ("queue", "offer", "message"),
    [
        pytest.param("dept-1", vec(two_departments(), gpu=1), "not a leaf", id="offer-from-a-parent-queue"),
        pytest.param("team-a", np.zeros(3, dtype=np.int64), "expected shape", id="offer-of-the-wrong-shape"),
    ],
)
def test_a_bad_offer_is_refused_and_changes_nothing(queue: str, offer: IntArray, message: str) -> None:
    tree = two_departments()
    walk = QueueTournament(tree, per_queue(tree, FAIR))
    with pytest.raises(ValueError, match=message):
        walk.set_offer(tree.index_of(queue), offer)
    assert walk.winner(usage_with(tree, {})) is None


def test_usage_of_another_tree_is_refused() -> None:
    tree = two_departments()
    walk = QueueTournament(tree, per_queue(tree, FAIR))
    with pytest.raises(ValueError, match="another queue tree"):
        walk.winner(usage_with(two_departments(), {}))
