"""``tasks_to_allocate`` (actions/gang.py) over one pass of a job's phases answers as KAI's rule written
out task by task, for every mix of phases, ``min_available`` and extras to skip."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.actions.gang import tasks_to_allocate
from loadmaster.core.columns.snapshot import BOUND, PENDING, PIPELINED, RELEASING
from loadmaster.core.model import Cluster, Job, Node, Task
from loadmaster.session import Session

PHASES = (PENDING, PENDING, BOUND, PIPELINED, RELEASING)


def by_the_rule(phases: list[int], first: int, min_available: int, skip: set[int]) -> list[int]:
    """The tasks that bring the job up to min_available (all or nothing), else exactly one more."""
    active = sum(1 for p in phases if p in (BOUND, PIPELINED))
    pending = [first + i for i, p in enumerate(phases) if p == PENDING and first + i not in skip]
    missing = min_available - active
    wanted = missing if missing > 0 else 1
    if missing > 0 and len(pending) < wanted:
        return []
    return pending[:wanted]


@settings(max_examples=300)
@given(
    st.lists(st.integers(1, 8), min_size=1, max_size=4),
    st.data(),
)
def test_the_tasks_to_allocate_are_the_ones_the_rule_names(sizes: list[int], data: st.DataObject) -> None:
    nodes = (Node("node-0", {"cpu": 64000}, {"cpu": 64000}),)
    jobs = tuple(
        Job(
            f"job-{j}",
            tuple(Task(f"job-{j}-{k}", f"job-{j}", {"cpu": 1000}) for k in range(size)),
            min_available=data.draw(st.integers(1, size)),
        )
        for j, size in enumerate(sizes)
    )
    session = Session.open(Cluster(nodes, jobs))
    phase = session.snapshot.state.task_phase
    drawn = data.draw(st.lists(st.sampled_from(PHASES), min_size=phase.size, max_size=phase.size))
    phase[:] = np.array(drawn, dtype=phase.dtype)
    for j, members in enumerate(session.snapshot.job_tasks):
        skip = set(data.draw(st.sets(st.sampled_from(list(members)))))
        phases = [int(phase[t]) for t in members]
        minimum = jobs[j].min_available
        assert tasks_to_allocate(session, j) == by_the_rule(phases, members.start, minimum, set())
        assert tasks_to_allocate(session, j, skip) == by_the_rule(phases, members.start, minimum, skip)
