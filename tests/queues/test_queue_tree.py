"""The queue tree: structure, quota arrays, and rejection of invalid queue lists with a field path."""

from __future__ import annotations

import numpy as np
import pytest

from loadmaster.core.model import Queue
from loadmaster.queues import QueueConfigError, QueueTree

from .trees import queue, tree_of


def three_level_tree() -> QueueTree:
    return tree_of(
        queue("org"),
        queue("dept-1", "org", deserved={"gpu": 4}),
        queue("team-a", "dept-1", deserved={"gpu": 2}, limit={"gpu": 3}),
        queue("dept-2", "org"),
        queue("team-b", "dept-1"),
        queue("solo"),
    )


def test_parents_children_leaves_and_depth_follow_the_parent_fields() -> None:
    tree = three_level_tree()
    index = tree.index_of
    assert tree.top == (index("org"), index("solo"))
    assert tree.children[index("dept-1")] == (index("team-a"), index("team-b"))
    assert tree.leaves == (index("team-a"), index("dept-2"), index("team-b"), index("solo"))
    assert [tree.depth[index(n)] for n in ("org", "dept-1", "team-a", "solo")] == [0, 1, 2, 0]
    assert tree.paths[index("team-a")].tolist() == [index("team-a"), index("dept-1"), index("org")]


def test_top_down_lists_every_parent_before_its_children() -> None:
    tree = three_level_tree()
    order = tree.top_down()
    assert sorted(order) == list(range(tree.size))
    for queue_index in order:
        parent = tree.parent[queue_index]
        if parent >= 0:
            assert order.index(parent) < order.index(queue_index)


def test_quota_arrays_mark_only_the_resources_a_queue_names() -> None:
    tree = three_level_tree()
    team_a = tree.index_of("team-a")
    gpu = tree.resources.index("gpu")
    assert tree.deserved[gpu, team_a] == 2000
    assert tree.limit[gpu, team_a] == 3000
    assert tree.deserved_set[:, team_a].tolist() == [False, False, True]
    assert not tree.limit_set[:, tree.index_of("team-b")].any()
    assert np.all(tree.deserved[~tree.deserved_set] == 0)


def test_leveled_queues_are_the_children_of_the_lowest_common_ancestor() -> None:
    tree = three_level_tree()
    index = tree.index_of
    assert tree.leveled(index("team-a"), index("team-b")) == (index("team-a"), index("team-b"))
    assert tree.leveled(index("team-a"), index("dept-2")) == (index("dept-1"), index("dept-2"))
    assert tree.leveled(index("team-a"), index("solo")) == (index("org"), index("solo"))
    with pytest.raises(ValueError, match="one branch"):
        tree.leveled(index("team-a"), index("dept-1"))


def test_an_unknown_queue_name_is_a_key_error_naming_it() -> None:
    with pytest.raises(KeyError, match="nope"):
        three_level_tree().index_of("nope")


@pytest.mark.parametrize(
    ("queues", "message"),
    [
        pytest.param(
            [queue("a"), queue("a")], r'queues\[1\]\.name: duplicate queue "a"', id="duplicate-name"
        ),
        pytest.param(
            [queue("a", "ghost")], r'queues\[0\]\.parent: unknown queue "ghost"', id="unknown-parent"
        ),
        pytest.param([queue("a", "a")], r"queues\[0\]\.parent: .* own parent", id="own-parent"),
        pytest.param(
            [queue("a", "b"), queue("b", "c"), queue("c", "a")],
            r"queues\[0\]\.parent: the parents form a cycle \(a -> b -> c -> a\)",
            id="parent-cycle",
        ),
        pytest.param(
            [queue("a", weight=-1)],
            r"queues\[0\]\.over_quota_weight: must be a finite number",
            id="negative-weight",
        ),
        pytest.param([queue("a", weight=float("nan"))], r"queues\[0\]\.over_quota_weight", id="nan-weight"),
        pytest.param(
            [Queue("a", deserved={"tpu": 1})],
            r'queues\[0\]\.deserved\.tpu: resource "tpu" is not among',
            id="unknown-resource",
        ),
        pytest.param(
            [Queue("a", limit={"gpu": -5})],
            r"queues\[0\]\.limit\.gpu: must be a non-negative",
            id="negative-limit",
        ),
        pytest.param([Queue("")], r"queues\[0\]\.name: must be a non-empty string", id="empty-name"),
    ],
)
def test_invalid_queue_lists_are_rejected_with_the_field_path(queues: list[Queue], message: str) -> None:
    with pytest.raises(QueueConfigError, match=message):
        QueueTree.build(queues, ("cpu", "memory", "gpu"))


def test_an_empty_queue_list_builds_an_empty_tree() -> None:
    tree = QueueTree.build([], ("cpu",))
    assert tree.size == 0
    assert tree.top == ()
    assert tree.deserved.shape == (1, 0)
