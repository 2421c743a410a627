"""Limits hold at every level; a non-preemptible job never pushes non-preemptible usage above deserved."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.queues import QueueTree, QueueUsage, fits_limits, fits_non_preemptible_quota

from .trees import queue, tree_of, usage_with, vec


def limited_tree() -> QueueTree:
    return tree_of(
        queue("org", limit={"gpu": 8}),
        queue("dept", "org", limit={"gpu": 6, "cpu": 10}, deserved={"gpu": 4}),
        queue("team-a", "dept", limit={"gpu": 4}, deserved={"gpu": 2}),
        queue("team-b", "dept"),
        queue("other", "org"),
    )


@pytest.mark.parametrize(
    ("held", "leaf", "wanted", "reason"),
    [
        pytest.param({"team-a": {"gpu": 3}}, "team-a", {"gpu": 1}, None, id="up-to-the-limit-fits"),
        pytest.param(
            {"team-a": {"gpu": 4}},
            "team-a",
            {"gpu": 2},
            "queue team-a limit gpu: 4 allocated + 2 requested > 4",
            id="leaf-limit",
        ),
        pytest.param(
            {"team-b": {"gpu": 5}},
            "team-b",
            {"gpu": 2},
            "queue dept limit gpu: 5 allocated + 2 requested > 6",
            id="parent-limit",
        ),
        pytest.param(
            {"team-b": {"gpu": 5}, "other": {"gpu": 3}},
            "other",
            {"gpu": 1},
            "queue org limit gpu: 8 allocated + 1 requested > 8",
            id="grandparent-limit",
        ),
        pytest.param(
            {"team-a": {"cpu": 9.5}},
            "team-b",
            {"cpu": 1},
            "queue dept limit cpu: 9500m allocated + 1 requested > 10",
            id="other-resource-at-parent",
        ),
        pytest.param(
            {"team-a": {"gpu": 4}},
            "team-a",
            {"cpu": 1, "memory": 2**40},
            None,
            id="ungoverned-and-unrequested-resources-are-not-checked",
        ),
        pytest.param(
            {"team-a": {"gpu": 5}},
            "team-a",
            {"cpu": 1},
            None,
            id="a-queue-over-its-limit-still-admits-what-does-not-use-that-resource",
        ),
        pytest.param(
            {"team-a": {"gpu": 4}, "team-b": {"gpu": 2}},
            "team-a",
            {"gpu": 1},
            "queue team-a limit gpu: 4 allocated + 1 requested > 4",
            id="the-leaf-is-reported-first",
        ),
    ],
)
def test_limits_are_checked_at_the_leaf_and_every_ancestor(
    held: dict[str, dict[str, float]], leaf: str, wanted: dict[str, float], reason: str | None
) -> None:
    tree = limited_tree()
    usage = usage_with(tree, held)
    assert fits_limits(usage, tree, tree.index_of(leaf), vec(tree, **wanted)) == reason


@pytest.mark.parametrize(
    ("held", "held_non_preemptible", "wanted", "reason"),
    [
        pytest.param({}, {"team-a": {"gpu": 1}}, {"gpu": 1}, None, id="up-to-deserved-fits"),
        pytest.param(
            {},
            {"team-a": {"gpu": 1}},
            {"gpu": 2},
            "queue team-a deserved gpu: 1 allocated to non-preemptible jobs + 2 requested > 2",
            id="leaf-deserved",
        ),
        pytest.param(
            {"team-a": {"gpu": 3}}, {}, {"gpu": 2}, None, id="preemptible-usage-above-deserved-does-not-count"
        ),
        pytest.param(
            {},
            {"team-b": {"gpu": 3}},
            {"gpu": 2},
            "queue dept deserved gpu: 3 allocated to non-preemptible jobs + 2 requested > 4",
            id="parent-deserved",
        ),
        pytest.param({}, {"team-a": {"gpu": 2}}, {"cpu": 64}, None, id="ungoverned-resources-are-unlimited"),
    ],
)
def test_non_preemptible_jobs_fit_within_deserved_at_every_level(
    held: dict[str, dict[str, float]],
    held_non_preemptible: dict[str, dict[str, float]],
    wanted: dict[str, float],
    reason: str | None,
) -> None:
    tree = limited_tree()
    usage = usage_with(tree, held, held_non_preemptible)
    assert fits_non_preemptible_quota(usage, tree, tree.index_of("team-a"), vec(tree, **wanted)) == reason


def test_a_queue_without_any_deserved_places_non_preemptible_jobs_freely() -> None:
    tree = tree_of(queue("default"))
    usage = usage_with(tree, {}, {"default": {"gpu": 100}})
    assert fits_non_preemptible_quota(usage, tree, 0, vec(tree, gpu=100)) is None


requests = st.lists(
    st.tuples(
        st.sampled_from(["team-a", "team-b", "other"]), st.integers(0, 3), st.integers(0, 4), st.booleans()
    ),
    max_size=25,
)


@settings(max_examples=60)
@given(requests)
def test_allocating_only_what_the_checks_admit_keeps_every_limit_and_quota(
    steps: list[tuple[str, int, int, bool]],
) -> None:
    tree = limited_tree()
    usage = QueueUsage.empty(tree)
    for name, gpu, cpu, preemptible in steps:
        leaf, wanted = tree.index_of(name), vec(tree, gpu=gpu, cpu=cpu)
        refused = fits_limits(usage, tree, leaf, wanted)
        if refused is None and not preemptible:
            refused = fits_non_preemptible_quota(usage, tree, leaf, wanted)
        if refused is None:
            usage.allocate(leaf, wanted, preemptible)
    assert np.all(~tree.limit_set | (usage.allocated <= tree.limit))
    assert np.all(~tree.deserved_set | (usage.allocated_non_preemptible <= tree.deserved))
