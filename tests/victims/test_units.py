"""A job's units (scenario spec, "Victims": Unit): its Running tasks whole, and each task above
``min_available`` alone; the same whether the job is read task by task (small) or as slices (large), and
whether they are made all at once or node by node."""

from __future__ import annotations

import pytest

from loadmaster.actions.victims.units import MANY_TASKS, JobUnits, Unit, units_of_job
from loadmaster.core.model import Cluster, Job, Node, Task, TaskStatus
from loadmaster.session import Session


def cluster_with(size: int, running: int, min_available: int) -> Cluster:
    nodes = tuple(Node(f"n{i}", {"cpu": 1_000_000}, {"cpu": 1_000_000}) for i in range(3))
    tasks = tuple(
        Task(f"w-{k}", "w", {"cpu": 100}, TaskStatus.RUNNING, f"n{k % 3}")
        if k < running
        else Task(f"w-{k}", "w", {"cpu": 100})
        for k in range(size)
    )
    return Cluster(nodes, (Job("w", tasks, min_available=min_available),))


@pytest.mark.parametrize("size", [MANY_TASKS // 2, MANY_TASKS * 3])
def test_a_job_offers_its_running_tasks_whole_and_each_above_its_minimum_alone(size: int) -> None:
    running = size - 5
    session = Session.open(cluster_with(size, running, min_available=4))
    units = units_of_job(session, 0)
    held = tuple(range(running))
    assert units[0] == Unit(0, held, 50, 0, frozenset({0, 1, 2}))
    assert units[1:] == [Unit(0, (t,), 50, k, frozenset({t % 3})) for k, t in enumerate(held[4:], start=1)]


@pytest.mark.parametrize("size", [MANY_TASKS // 2, MANY_TASKS * 3])
def test_an_evicted_task_leaves_its_units_and_a_job_with_a_new_placement_offers_none(size: int) -> None:
    session = Session.open(cluster_with(size, size - 5, min_available=1))
    session.statement.evict_many([0, 2], "test", "")
    units = units_of_job(session, 0)
    assert units[0].tasks == tuple(range(1, 2)) + tuple(range(3, size - 5))
    assert [u.tasks for u in units[1:]] == [(t,) for t in units[0].tasks[1:]]
    session.statement.pipeline(size - 1, 0, "test", "")  # a Pending task placed in this cycle
    assert units_of_job(session, 0) == []


@pytest.mark.parametrize("size", [MANY_TASKS // 2, MANY_TASKS * 3])
@pytest.mark.parametrize("all_first", [False, True])
def test_the_units_on_a_node_are_those_of_all_the_units_with_a_task_there(size: int, all_first: bool) -> None:
    cluster = cluster_with(size, size - 5, min_available=2)
    session = Session.open(cluster)
    session.statement.evict_many([1, 4], "test", "")  # holes: the subs are positions among the held
    units = units_of_job(session, 0)
    job_units = JobUnits.of(session, 0)
    if all_first:  # the node's units are then taken from the whole list
        assert job_units.all() == units
    for n in (2, 0, 1, 2):  # a node asked for twice gets the same list
        assert job_units.on(n) == [u for u in units if n in u.nodes]
    assert job_units.on(3) == []  # no task there
    assert job_units.all() == units
