"""The backoff ends index (runtime/scheduling/model/backoff_ends.py) answers like a scan over every
Pending replica's backoff end, after any sequence of changes and of readings at a later time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from loadmaster.runtime.scheduling.model import backoff_ends
from loadmaster.runtime.scheduling.model.backoff_ends import BackoffEnds

START = datetime(2026, 1, 1, tzinfo=UTC)
STEPS = st.lists(
    st.tuples(st.integers(0, 6), st.none() | st.integers(0, 30), st.integers(0, 4)), min_size=1, max_size=80
)


@given(STEPS)
def test_the_index_answers_like_a_scan_of_the_pending_replicas(
    steps: list[tuple[int, int | None, int]],
) -> None:
    index, ends = BackoffEnds(), {}
    now = START
    for replica, end_s, advance_s in steps:
        name = f"r{replica}"
        end = None if end_s is None else START + timedelta(seconds=end_s)
        index.set(name, end)
        ends[name] = end
        now += timedelta(seconds=advance_s)  # readings never go back
        ahead = [when for when in ends.values() if when is not None and when > now]
        assert index.at(now) == (len(ahead), min(ahead, default=None))


def test_stale_entries_are_dropped_when_they_outnumber_the_live_ones() -> None:
    index = BackoffEnds()
    for attempt in range(3 * backoff_ends.STALE_FLOOR):
        index.set("r", START + timedelta(seconds=attempt + 1))  # one replica, rewritten again and again
    assert len(index._heap) <= backoff_ends.STALE_RATIO + backoff_ends.STALE_FLOOR + 1
    assert index.at(START) == (1, START + timedelta(seconds=3 * backoff_ends.STALE_FLOOR))
