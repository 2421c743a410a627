"""Which replicas in a backoff could fit the nodes that gained room (runtime/scheduling/room_events.py)."""

from __future__ import annotations

from loadmaster.core.model import Node, SchedulerConfig, Taint, Task, TaskStatus
from loadmaster.runtime.scheduling.room_events import RoomLog, fitting_waiting_tasks

GI = 2**30


def _node(name: str, cpu: int, taints: tuple[Taint, ...] = ()) -> Node:
    alloc = {"cpu": cpu * 1000, "memory": 16 * GI}
    return Node(name, alloc, alloc, taints=taints)


def _waiting(name: str, cpu: int) -> Task:
    return Task(name, f"svc-{name}", {"cpu": cpu * 1000, "memory": GI}, previous_node="gone")


def test_only_the_waiting_replicas_that_fit_a_node_with_room_are_chosen() -> None:
    running = Task("old-0", "old", {"cpu": 3000, "memory": GI}, status=TaskStatus.RUNNING, node="n1")
    waiting = [_waiting("small-0", 1), _waiting("small-1", 1), _waiting("big-0", 2)]
    fitting = fitting_waiting_tasks([_node("n1", 4)], [running], waiting, SchedulerConfig())
    assert fitting == {"small-0", "small-1"}  # 1 cpu is left on n1: the 2-cpu replica does not fit


def test_a_node_that_turns_the_replica_away_gives_no_room_for_it() -> None:
    tainted = _node("n2", 8, (Taint("dedicated", "gpu", "NoSchedule"),))
    assert fitting_waiting_tasks([tainted], [], [_waiting("web-0", 1)], SchedulerConfig()) == set()
    assert fitting_waiting_tasks([], [], [_waiting("web-0", 1)], SchedulerConfig()) == set()


def test_the_room_log_hands_out_each_node_once() -> None:
    log = RoomLog()
    for node in ("n1", "n2", "n1"):
        log.add(node)
    assert log.take() == {"n1", "n2"}
    assert log.take() == set()
