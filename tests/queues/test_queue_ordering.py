"""Queue order (each rule in isolation), the tree walk, and job order within a leaf."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

from loadmaster.core.model import Job, Queue
from loadmaster.queues import (
    QueueTree,
    compare_queues,
    job_order_key,
    next_leaf,
    next_victim_leaf,
    queue_order_key,
    queue_standing,
    victim_order_key,
)
from loadmaster.queues.standing import QueueStanding, queue_standings

from .trees import per_queue, queue, tree_of, usage_with, vec

CPU_GPU = ("cpu", "gpu")
Amounts = Mapping[str, float]


def first_of_two(
    queues: list[Queue], fair: Mapping[str, Amounts], held: Mapping[str, Amounts], jobs: Mapping[str, Amounts]
) -> str:
    """Which of two queues goes first, each with its candidate job."""
    tree = tree_of(*queues, resources=CPU_GPU)
    usage = usage_with(tree, held)
    fair_share = per_queue(tree, fair)
    standings = [
        queue_standing(tree, usage, fair_share, tree.index_of(q.name), job_request=vec(tree, **jobs[q.name]))
        for q in queues
    ]
    ordered = sorted(standings, key=queue_order_key)
    assert compare_queues(ordered[0], ordered[1]) < 0 < compare_queues(ordered[1], ordered[0])
    return tree.names[ordered[0].queue]


EVEN = {"a": {"cpu": 4, "gpu": 4}, "b": {"cpu": 4, "gpu": 4}}
ONE_GPU = {"a": {"gpu": 1}, "b": {"gpu": 1}}


@pytest.mark.parametrize(
    ("queues", "fair", "held", "jobs", "first"),
    [
        pytest.param(
            [queue("a", priority=9), queue("b")],
            EVEN,
            {"a": {"cpu": 5, "gpu": 5}, "b": {"cpu": 3, "gpu": 3}},
            ONE_GPU,
            "b",
            id="1-over-utilised-in-every-resource-goes-last-even-with-higher-priority",
        ),
        pytest.param(
            [queue("a"), queue("b")],
            EVEN,
            {"a": {"cpu": 5}, "b": {"gpu": 4}},
            {"a": {"gpu": 1}, "b": {"gpu": 2}},
            "a",  # a is over its cpu share only; with the jobs a holds 5/4, b 6/4
            id="1-over-in-one-resource-only-is-not-over-utilised-so-dominant-share-decides",
        ),
        pytest.param(
            [queue("a", priority=9, deserved={"gpu": 2}), queue("b", deserved={"gpu": 2})],
            EVEN,
            {"a": {"gpu": 2}, "b": {"gpu": 1}},
            ONE_GPU,
            "b",
            id="2-starved-goes-before-higher-priority",
        ),
        pytest.param(
            [queue("a"), queue("b", deserved={"cpu": 1})],
            EVEN,
            {"b": {"gpu": 3}},
            ONE_GPU,
            "b",
            id="2-starved-counts-only-governed-resources",
        ),
        pytest.param(
            [queue("a"), queue("b", priority=1)],
            EVEN,
            {"b": {"gpu": 3}},
            ONE_GPU,
            "b",
            id="3-higher-priority-goes-first",
        ),
        pytest.param(
            [queue("a"), queue("b")],
            {"a": {"gpu": 4}, "b": {"cpu": 4, "gpu": 4}},
            {"b": {"gpu": 4}},
            {"a": {"gpu": 1, "cpu": 0.001}, "b": {"gpu": 1}},
            "b",  # with the jobs a's dominant share is 1m cpu x 1000 = 1.0, b's 5/4: only rule 4 puts b first
            id="4-using-a-resource-with-zero-share-goes-last",
        ),
        pytest.param(
            [queue("a"), queue("b")],
            EVEN,
            {"a": {"gpu": 1}},
            {"a": {"gpu": 2}, "b": {"gpu": 4}},
            "a",
            id="5-smaller-dominant-share-with-the-job-goes-first",
        ),
        pytest.param(
            [queue("a"), queue("b")],
            EVEN,
            {"a": {"gpu": 1}},
            {"a": {"gpu": 1}, "b": {"gpu": 2}},
            "b",
            id="6-equal-with-the-job-then-smaller-share-without-it",
        ),
        pytest.param(
            [queue("a"), queue("b")],
            {"a": {"cpu": 4, "gpu": 4}, "b": {"cpu": 2, "gpu": 2}},
            {},
            {"a": {}, "b": {}},
            "b",
            id="7-smaller-allocatable-share-in-every-resource-goes-first",
        ),
        pytest.param(
            [queue("a"), queue("b")],
            {"a": {"cpu": 2, "gpu": 4}, "b": {"cpu": 4, "gpu": 2}},
            {},
            {"a": {}, "b": {}},
            "a",
            id="7-incomparable-allocatable-shares-fall-through-to-age",
        ),
        pytest.param([queue("a"), queue("b")], EVEN, {}, ONE_GPU, "a", id="8-older-queue-goes-first"),
    ],
)
def test_each_queue_order_rule_decides_when_the_earlier_ones_tie(
    queues: list[Queue],
    fair: Mapping[str, Amounts],
    held: Mapping[str, Amounts],
    jobs: Mapping[str, Amounts],
    first: str,
) -> None:
    assert first_of_two(queues, fair, held, jobs) == first


def test_a_queue_without_deserved_is_never_starved() -> None:
    tree = tree_of(queue("default"), resources=CPU_GPU)
    standing = queue_standing(
        tree, usage_with(tree, {}), per_queue(tree, {}), 0, job_request=vec(tree, cpu=1)
    )
    assert not standing.starved


def test_dominant_share_with_the_job_subtracts_victims_already_taken() -> None:
    tree = tree_of(queue("a"), resources=CPU_GPU)
    usage = usage_with(tree, {"a": {"gpu": 3}})
    fair = per_queue(tree, {"a": {"cpu": 1, "gpu": 4}})
    standing = queue_standing(tree, usage, fair, 0, victims_request=vec(tree, gpu=2))
    assert standing.dominant_share_with_job == pytest.approx(0.25)
    assert standing.dominant_share == pytest.approx(0.75)


def test_a_zero_allocatable_share_weighs_a_thousand_per_unit_held() -> None:
    tree = tree_of(queue("a"), resources=CPU_GPU)
    standing = queue_standing(tree, usage_with(tree, {"a": {"gpu": 2}}), per_queue(tree, {}), 0)
    assert standing.dominant_share == 2000.0


def two_departments() -> QueueTree:
    return tree_of(
        queue("dept-1"),
        queue("team-a", "dept-1"),
        queue("team-b", "dept-1"),
        queue("dept-2"),
        queue("team-c", "dept-2"),
        resources=CPU_GPU,
    )


FAIR = {
    "dept-1": {"gpu": 4},
    "dept-2": {"gpu": 4},
    "team-a": {"gpu": 2},
    "team-b": {"gpu": 2},
    "team-c": {"gpu": 4},
}


def test_the_tree_walk_picks_the_best_child_at_each_level_and_sees_new_placements() -> None:
    tree = two_departments()
    usage = usage_with(tree, {"team-a": {"gpu": 2}, "team-c": {"gpu": 1}})
    fair = per_queue(tree, FAIR)
    pending = {tree.index_of(name): vec(tree, gpu=1) for name in ("team-a", "team-b", "team-c")}
    # dept-1 would hold (2+1)/4 with team-b's job (its best leaf); dept-2 (1+1)/4: dept-2 goes first.
    assert next_leaf(tree, usage, fair, pending) == tree.index_of("team-c")
    usage.allocate(tree.index_of("team-c"), vec(tree, gpu=1), preemptible=True)
    # Now both departments are at 3/4 with the job and 2/4 without: the older, dept-1, and within it team-b.
    assert next_leaf(tree, usage, fair, pending) == tree.index_of("team-b")


def test_the_tree_walk_skips_branches_without_pending_jobs_and_ends_when_nothing_is_pending() -> None:
    tree = two_departments()
    usage = usage_with(tree, {"team-c": {"gpu": 4}})
    fair = per_queue(tree, FAIR)
    assert next_leaf(tree, usage, fair, {tree.index_of("team-c"): vec(tree, gpu=1)}) == tree.index_of(
        "team-c"
    )
    assert next_leaf(tree, usage, fair, {}) is None


def test_victim_queues_are_walked_in_the_reverse_order() -> None:
    tree = two_departments()
    usage = usage_with(tree, {"team-a": {"gpu": 2}, "team-b": {"gpu": 1}, "team-c": {"gpu": 2}})
    fair = per_queue(tree, FAIR)
    taken = {tree.index_of(name): vec(tree, gpu=1) for name in ("team-a", "team-b", "team-c")}
    # dept-1 keeps (3-1)/4 after its victim, dept-2 (2-1)/4: dept-1 would go last, so it gives first;
    # inside dept-1 team-a keeps (2-1)/2 > team-b's (1-1)/2.
    assert next_victim_leaf(tree, usage, fair, taken) == tree.index_of("team-a")
    assert next_victim_leaf(tree, usage, fair, {}) is None


def test_the_comparison_of_a_queue_with_itself_is_neutral() -> None:
    standing = QueueStanding(0, False, True, 1, False, 0.5, 0.5, (1, 2), 0)
    assert compare_queues(standing, standing) == 0


def job(name: str, priority: int = 50, min_available: int = 1) -> Job:
    return Job(name=name, tasks=(), priority=priority, min_available=min_available)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param((job("x", priority=100), 0, 5), (job("y"), 0, 1), id="higher-priority-first"),
        pytest.param(
            (job("x", min_available=2), 1, 5), (job("y", min_available=2), 2, 1), id="below-min-before-at-min"
        ),
        pytest.param(
            (job("x", min_available=2), 2, 5), (job("y", min_available=2), 3, 1), id="at-min-before-above-min"
        ),
        pytest.param((job("x"), 0, 1), (job("y"), 0, 2), id="older-first"),
        pytest.param((job("a"), 0, 1), (job("b"), 0, 1), id="name-breaks-a-tie-of-age"),
    ],
)
def test_job_order_within_a_leaf(first: tuple[Job, int, int], second: tuple[Job, int, int]) -> None:
    assert job_order_key(*first) < job_order_key(*second)
    assert victim_order_key(*second) < victim_order_key(*first) or first[2] == second[2]


def test_victim_order_is_the_exact_reverse_of_job_order() -> None:
    jobs = [
        (job("a", priority=100), 0, 0),
        (job("b", min_available=3), 1, 1),
        (job("c", min_available=3), 3, 2),
        (job("d", min_available=3), 4, 3),
        (job("e"), 1, 4),
        (job("f", priority=10), 0, 5),
    ]
    by_job_order = sorted(jobs, key=lambda entry: job_order_key(*entry))
    by_victim_order = sorted(jobs, key=lambda entry: victim_order_key(*entry))
    assert [j.name for j, _, _ in by_victim_order] == [j.name for j, _, _ in reversed(by_job_order)]
    assert [j.name for j, _, _ in by_job_order] == ["a", "b", "c", "e", "d", "f"]


def test_fair_share_arrays_are_not_modified_by_ordering() -> None:
    tree = two_departments()
    fair = per_queue(tree, FAIR)
    before = fair.copy()
    next_leaf(tree, usage_with(tree, {}), fair, {tree.index_of("team-a"): vec(tree, gpu=1)})
    assert np.array_equal(fair, before)


def test_standings_computed_together_equal_standings_computed_one_by_one() -> None:
    tree = two_departments()
    usage = usage_with(tree, {"team-a": {"gpu": 2, "cpu": 1}, "team-c": {"gpu": 5}})
    fair = per_queue(tree, FAIR)
    jobs = np.stack([vec(tree, gpu=q + 1) for q in range(tree.size)], axis=1)
    together = queue_standings(tree, usage, fair, range(tree.size), jobs=jobs, victims=jobs // 2)
    one_by_one = [
        queue_standing(tree, usage, fair, q, job_request=jobs[:, q], victims_request=jobs[:, q] // 2)
        for q in range(tree.size)
    ]
    assert together == one_by_one
