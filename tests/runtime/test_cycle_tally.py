"""A cycle's tally (cycle_tally.py), made off the loop in one pass, and the piecewise drop of its writes."""

from __future__ import annotations

from datetime import UTC, datetime

from loadmaster.runtime.plane.process.piecewise_drop import PIECE, drop_in_pieces
from loadmaster.runtime.scheduling.cycle_tally import BACKOFF_LOG_LINES, CycleTally
from loadmaster.runtime.scheduling.cycle_writes import KeptRetry, ReplicaUpdate
from loadmaster.runtime.scheduling.model.model_entries import ReplicaState
from loadmaster.store.interface import Put

CREATED = datetime(2026, 1, 1, tzinfo=UTC)


def update(name: str, kind: str, **fields: object) -> ReplicaUpdate:
    return ReplicaUpdate(name, Put(f"/r/{name}", b"{}"), kind, **fields)  # type: ignore[arg-type]


def pending(name: str) -> ReplicaState:
    return ReplicaState(name, 1, 1, {}, "job", (0, name), "Pending", None, False, 5, None)


def test_a_tally_counts_written_kinds_and_every_failure_but_not_kept_retries_as_decisions() -> None:
    updates = [
        update("a", "bind", node="n1", created_at=CREATED),
        update("b", "bind", node="n1"),
        update("c", "wait", failure="capacity"),
        update("d", "wait", failure="capacity", backoff=True, entered_backoff=True),
        update("e", "wait", backoff=True),
        update("f", "move", node="n2"),
    ]
    kept = [KeptRetry(pending("g"), "capacity"), KeptRetry(pending("h"), None)]
    tally = CycleTally.of(updates, kept)
    assert tally.decisions == {"bind": 2, "wait": 3, "move": 1}
    assert tally.failures == {"capacity": 3, "unknown": 2}
    assert (tally.retries, tally.max_retries, tally.entering_count) == (1, 2, 1)
    assert tally.binds_per_node == {"n1": 2} and tally.bound_created_at == [CREATED]
    assert tally.moves_to == ["n2"] and [u.name for u in tally.entering] == ["d"]


def test_a_tally_keeps_only_the_replicas_entering_a_backoff_that_are_logged_by_name() -> None:
    entering = [update(f"r{i}", "wait", backoff=True, entered_backoff=True) for i in range(100)]
    tally = CycleTally.of(entering, [])
    assert tally.entering_count == 100
    # one line each for the first BACKOFF_LOG_LINES, and the next one named in the line with the count
    assert [u.name for u in tally.entering] == [f"r{i}" for i in range(BACKOFF_LOG_LINES + 1)]


def test_dropping_in_pieces_empties_every_list() -> None:
    first, second = list(range(PIECE * 3 + 7)), [object() for _ in range(5)]
    drop_in_pieces(first, second, [])
    assert first == [] and second == []
