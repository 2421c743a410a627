"""What ``node remove --wait`` shows: moved of total until the node is gone or the drain times out."""

from __future__ import annotations

from typing import Any

import pytest

from loadmaster.cli.commands.node import DrainProgress, drain_progress


def node(**drain: Any) -> dict[str, Any]:
    return {"metadata": {"name": "n1"}, "status": {"drain": drain} if drain else {}}


def on_node(*names: str) -> list[dict[str, Any]]:
    return [{"metadata": {"name": name}} for name in names]


@pytest.mark.parametrize(
    ("stored", "replicas", "expected"),
    [
        pytest.param(
            node(state="draining", replicas=["a", "b", "c"]),
            on_node("a", "b", "a.next", "logs-n1"),
            DrainProgress("draining", 3, ("a", "b")),
            id="one-of-three-moved",
        ),
        pytest.param(
            node(state="timed_out", replicas=["a", "b"], not_moved=["b"]),
            on_node("b"),
            DrainProgress("timed_out", 2, ("b",)),
            id="timed-out-names-what-stayed",
        ),
        pytest.param(None, [], DrainProgress("removed", 0, ()), id="node-deleted"),
        pytest.param(node(), [], DrainProgress("removed", 0, ()), id="node-registered-again-since"),
    ],
)
def test_drain_progress_counts_the_replicas_no_longer_on_the_node(
    stored: dict[str, Any] | None, replicas: list[dict[str, Any]], expected: DrainProgress
) -> None:
    progress = drain_progress(stored, replicas)
    assert progress == expected
    assert progress.moved == expected.total - len(expected.not_moved)
