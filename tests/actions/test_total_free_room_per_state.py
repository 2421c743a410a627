"""The evicting actions sum the cluster's free room once per state (actions/evicting_action.py): the
room handed to a job's turn is the room at that moment, also after a decision changed it."""

from __future__ import annotations

import numpy as np

from loadmaster.actions.evicting_action import _TotalFreeRoom
from loadmaster.actions.victims.fit import total_free_room
from loadmaster.core.model import Cluster, Job, Node, Task
from loadmaster.session import Session


def test_the_room_handed_out_follows_each_decision_and_is_summed_once_per_state() -> None:
    nodes = tuple(Node(f"node-{i}", {"cpu": 4000}, {"cpu": 4000}) for i in range(2))
    jobs = tuple(Job(f"job-{j}", (Task(f"job-{j}-0", f"job-{j}", {"cpu": 1000}),)) for j in range(2))
    session = Session.open(Cluster(nodes, jobs))
    room = _TotalFreeRoom(session)
    before = room.now()
    assert before is not None and room.now() is before  # the same state: not summed again
    cpu = session.snapshot.res_index["cpu"]
    assert int(before[cpu]) == 8000
    session.statement.allocate(0, 0)
    session.commit()
    after = room.now()
    assert after is not None and int(after[cpu]) == 7000
    fresh = total_free_room(session)
    assert fresh is not None and np.array_equal(after, fresh)
