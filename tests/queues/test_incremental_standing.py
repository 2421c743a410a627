"""The one-queue standing from plain integers equals the vectorised one, field for field."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.queues import QueueStanding, QueueTree, QueueUsage, compare_queues, queue_standing
from loadmaster.queues.standing import rank_of
from loadmaster.queues.standing_inputs import StandingInputs

from .test_incremental_walk import RESOURCES, trees, units
from .test_queue_ordering import FAIR, two_departments
from .trees import per_queue

# any integers (not round thousands), so that a float computed in another order would show
amounts = st.tuples(st.integers(0, 5000), st.integers(0, 5000)).map(lambda p: np.array(p, dtype=np.int64))


@settings(max_examples=150)
@given(tree=trees(), data=st.data())
def test_the_integer_standing_equals_the_vectorised_standing(tree: QueueTree, data: st.DataObject) -> None:
    fair = np.array([[data.draw(units) for _ in range(tree.size)] for _ in RESOURCES], dtype=np.int64)
    usage = QueueUsage.empty(tree)
    for leaf in tree.leaves:
        usage.allocate(leaf, data.draw(amounts), preemptible=True)
    inputs = StandingInputs(tree, fair)
    for q in range(tree.size):
        job = data.draw(st.one_of(st.none(), amounts))
        victims = data.draw(st.one_of(st.none(), amounts))  # may exceed what is held: shares below 0
        expected = queue_standing(tree, usage, fair, q, job_request=job, victims_request=victims)
        allocated = usage.allocated[:, q].tolist()
        got = inputs.standing(
            q,
            allocated,
            job=None if job is None else job.tolist(),
            victims=None if victims is None else victims.tolist(),
        )
        assert got == expected


def test_a_fair_share_of_the_wrong_shape_is_refused() -> None:
    tree = two_departments()
    with pytest.raises(ValueError, match="fair_share: expected shape"):
        StandingInputs(tree, per_queue(tree, FAIR)[:, :2])


standings = st.builds(
    QueueStanding,
    queue=st.integers(0, 3),
    over_utilised=st.booleans(),
    starved=st.booleans(),
    priority=st.integers(0, 2),
    uses_zero_share=st.booleans(),
    dominant_share_with_job=st.sampled_from([0.0, -0.0, 0.5, 1.0, 1000.0]),
    dominant_share=st.sampled_from([0.0, 0.5, 1.0]),
    allocatable_share=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    age=st.integers(0, 3),
)


@settings(max_examples=300)
@given(a=standings, b=standings)
def test_where_ranks_differ_they_order_two_standings_as_the_comparison_does(
    a: QueueStanding, b: QueueStanding
) -> None:
    if rank_of(a) != rank_of(b):
        assert (compare_queues(a, b) < 0) == (rank_of(a) < rank_of(b))
        assert (compare_queues(a, b) > 0) == (rank_of(a) > rank_of(b))
