"""Safety and liveness of one cycle over random clusters."""

from __future__ import annotations

from hypothesis import given, settings

from loadmaster.actions.allocate import allocate
from loadmaster.core.columns.snapshot import PENDING
from loadmaster.core.model import Cluster, Job, Node, Task, TaskStatus
from loadmaster.cycle import run_cycle
from loadmaster.session import Session
from tests.properties.strategies import clusters

PLACED = (TaskStatus.RUNNING.value, TaskStatus.PIPELINED.value, TaskStatus.MOVED.value)


def _add(usage: dict[str, dict[str, int]], node: str, request: dict[str, int]) -> None:
    for r, amount in request.items():
        usage[node][r] = usage[node].get(r, 0) + amount


def _occupancy(cluster: Cluster, plan_tasks: dict) -> tuple[dict, dict]:
    """(now: Running + tasks still releasing where they were; after: Running + Pipelined + Moved)."""
    now: dict[str, dict[str, int]] = {n.name: {} for n in cluster.nodes}
    after: dict[str, dict[str, int]] = {n.name: {} for n in cluster.nodes}
    for job in cluster.jobs:
        for task in job.tasks:
            outcome = plan_tasks[task.name]
            if outcome.status == "Running":
                _add(now, outcome.node, task.request)
                _add(after, outcome.node, task.request)
            elif outcome.status in ("Pipelined", "Moved"):
                _add(after, outcome.node, task.request)
            if outcome.status in ("Evicted", "Moved", "Releasing"):
                _add(now, task.node, task.request)
    return now, after


@settings(max_examples=150)
@given(clusters())
def test_no_node_is_ever_over_committed(cluster: Cluster) -> None:
    plan = run_cycle(cluster)
    allocatable = {n.name: n.allocatable for n in cluster.nodes}
    for usage in _occupancy(cluster, plan.tasks):
        for node, used in usage.items():
            for r, amount in used.items():
                assert amount <= allocatable[node].get(r, 0), f"{node} over-committed on {r}"


@settings(max_examples=100)
@given(clusters())
def test_the_same_input_gives_the_same_plan(cluster: Cluster) -> None:
    first, second = run_cycle(cluster), run_cycle(cluster)
    assert first.tasks == second.tasks
    assert first.decisions == second.decisions


@settings(max_examples=100)
@given(clusters())
def test_gangs_are_all_or_nothing(cluster: Cluster) -> None:
    plan = run_cycle(cluster)
    for job in cluster.jobs:
        active = sum(plan.tasks[t.name].status in PLACED for t in job.tasks)
        newly = sum(plan.tasks[t.name].status in PLACED and t.status == TaskStatus.PENDING for t in job.tasks)
        assert newly == 0 or active >= job.min_available


@settings(max_examples=100)
@given(clusters(with_running=False))
def test_a_lone_pending_task_that_fits_an_empty_ready_node_is_placed(cluster: Cluster) -> None:
    task = cluster.jobs[0].tasks[0]
    empty = Node("zz-empty", {"cpu": 64000, "memory": 256 * 2**30, "gpu": 8000},
                 {"cpu": 64000, "memory": 256 * 2**30, "gpu": 8000})  # fmt: skip
    job = Job("lone", (Task(task.name, "lone", task.request, tolerations=task.tolerations),))
    plan = run_cycle(Cluster((*cluster.nodes, empty), (job,)))
    assert plan.tasks[task.name].status in PLACED


@settings(max_examples=100)
@given(clusters())
def test_allocate_leaves_no_task_pending_that_still_has_a_feasible_node(cluster: Cluster) -> None:
    session = Session.open(cluster)
    allocate(session)
    snapshot = session.snapshot
    for t in range(snapshot.n_tasks):
        job = snapshot.job_of_task(t)
        if snapshot.state.task_phase[t] != PENDING or job.min_available > 1 or t in session.pending_reasons:
            continue
        assert not session.engine.feasible(session.engine.context(t)).any(), snapshot.tasks[t].name


def test_a_cluster_without_nodes_leaves_every_task_pending_with_a_hint() -> None:
    job = Job("lone", (Task("lone-0", "lone", {"cpu": 100}), Task("lone-1", "lone", {"cpu": 100})))
    plan = run_cycle(Cluster((), (job,)))
    assert {o.status for o in plan.tasks.values()} == {"Pending"}
    assert plan.explanations["lone-0"].hints == ["the cluster has no nodes"]


def test_an_unknown_action_is_refused_naming_it() -> None:
    import pytest

    from loadmaster.core.model import SchedulerConfig

    cluster = Cluster((), (), config=SchedulerConfig(actions=("allocate", "backfill")))
    with pytest.raises(ValueError, match=r"config\.actions: unknown action backfill"):
        run_cycle(cluster)
