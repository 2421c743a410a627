"""The room a reprieve starts from is shared by the searches of one state only: after a commit frees room
elsewhere, the same node's offer is worked out on the new free room (``victims/state_memo.py``)."""

from __future__ import annotations

from loadmaster.actions.victims.index import VictimIndex
from loadmaster.actions.victims.reprieve_room import ReprieveRoom
from loadmaster.core.model import Cluster, Job, Node, Task, TaskStatus
from loadmaster.session import Session


def test_a_reprieve_after_a_commit_starts_from_the_free_room_it_left() -> None:
    # n0 runs a (job a) and b (job b), 1,000 millicores each; n1 is full with c; t asks 2,000.
    nodes = tuple(Node(n, {"cpu": 2000}, {"cpu": 2000}) for n in ("n0", "n1"))
    running = [("a", "n0", 1000), ("b", "n0", 1000), ("c", "n1", 2000)]
    jobs = tuple(Job(j, (Task(j, j, {"cpu": cpu}, TaskStatus.RUNNING, n),)) for j, n, cpu in running)
    session = Session.open(Cluster(nodes, (*jobs, Job("t", (Task("t", "t", {"cpu": 2000}),)))))
    t = session.snapshot.task_index["t"]
    index = VictimIndex(session, lambda *_: True, lambda j: 0)
    pool = index.pool(3)

    def kept_on_n0() -> list[str]:
        room = ReprieveRoom.of(session, t, index)
        assert room is not None
        kept = room.reprieve([], index.on(0, pool, 3, set()), 0)
        assert kept is not None
        return [session.snapshot.jobs[u.job].name for u in kept]

    assert kept_on_n0() == ["a", "b"]  # t fits only where both leave
    session.statement.evict(session.snapshot.task_index["c"], "test", "")
    session.commit()
    index.refresh([2])
    assert kept_on_n0() == []  # n1 is free now: a and b both keep running
