"""The backoff ends index (runtime/scheduling/model/backoff_ends.py) answers like a scan over every
Pending replica's backoff end, after any sequence of changes and readings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from loadmaster.runtime.scheduling.model.backoff_ends import BackoffEnds

START = datetime(2026, 1, 1, tzinfo=UTC)
STEPS = st.lists(
    st.tuples(st.integers(0, 6), st.none() | st.integers(0, 30), st.integers(-4, 4)), min_size=1, max_size=80
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
        now += timedelta(seconds=advance_s)
        ahead = [when for when in ends.values() if when is not None and when > now]
        assert index.at(now) == (len(ahead), min(ahead, default=None))


def test_readings_may_go_back_in_time() -> None:
    index = BackoffEnds()
    index.set("a", START + timedelta(seconds=10))
    index.set("b", START + timedelta(seconds=20))
    assert index.at(START + timedelta(seconds=15)) == (1, START + timedelta(seconds=20))
    assert index.at(START) == (2, START + timedelta(seconds=10))
    index.set("a", None)  # placed, or deleted
    assert index.at(START) == (1, START + timedelta(seconds=20))
