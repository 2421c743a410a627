"""The node change log answers a mark far behind from its per-node stamps, with the same nodes."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from loadmaster.core.working.node_changes import NodeChanges

NODE_ARRAYS = st.lists(st.integers(0, 9), max_size=4).map(lambda nodes: np.array(nodes, dtype=np.int64))
ENTRIES = st.lists(st.one_of(st.integers(0, 9), NODE_ARRAYS), max_size=40)


@given(ENTRIES, st.integers(0, 40))
def test_stamped_and_joined_logs_give_the_same_nodes_since_any_mark(entries: list[object], at: int) -> None:
    stamped, joined = NodeChanges(n_nodes=10), NodeChanges()
    marks = []
    for entry in entries:
        marks.append((stamped.mark(), joined.mark()))
        stamped.add(entry)  # type: ignore[arg-type]
        joined.add(entry)  # type: ignore[arg-type]
    marks.append((stamped.mark(), joined.mark()))
    mark_stamped, mark_joined = marks[min(at, len(marks) - 1)]
    expected = joined.since(mark_joined)
    assert expected is not None
    assert stamped.since(mark_stamped).tolist() == expected.tolist()  # type: ignore[union-attr]
