"""config.backfill_depth (actions/backfill_depth.py): how far past the first job that gets nothing an action
keeps trying, and the reason of the jobs it does not reach."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings

from loadmaster.actions.backfill_depth import DepthBudget
from loadmaster.core.model import Cluster, Job, Node, SchedulerConfig, Task, TaskStatus
from loadmaster.cycle import run_cycle
from loadmaster.scenario.config import as_config
from loadmaster.scenario.errors import ScenarioError
from tests.properties.strategies import clusters


def one_cpu_nodes(count: int) -> tuple[Node, ...]:
    return tuple(Node(f"node-{i}", {"cpu": 1000}, {"cpu": 1000}) for i in range(count))


def gang(name: str, size: int) -> Job:
    return Job(name, tuple(Task(f"{name}-{k}", name, {"cpu": 1000}) for k in range(size)), min_available=size)


def test_without_a_depth_a_later_job_that_fits_is_placed_past_a_gang_that_does_not() -> None:
    plan = run_cycle(Cluster(one_cpu_nodes(2), (gang("big", 3), gang("small", 1))))
    assert plan.tasks["small-0"].status == "Running"


def test_at_depth_zero_the_jobs_after_the_first_that_gets_nothing_wait_and_say_why() -> None:
    config = SchedulerConfig(actions=("allocate",), backfill_depth=0)
    plan = run_cycle(Cluster(one_cpu_nodes(2), (gang("big", 3), gang("small", 1)), (), config))
    assert plan.tasks["small-0"].status == "Pending"
    assert plan.explanations["small-0"].reason == (
        "not tried in this cycle: backfill_depth 0 reached (0 jobs tried after the first that got nothing)"
    )
    assert plan.explanations["big-0"].reason.startswith("gang big needs 3 more tasks")


def test_a_job_placed_before_the_first_miss_does_not_count_against_the_depth() -> None:
    config = SchedulerConfig(actions=("allocate",), backfill_depth=0)
    jobs = (gang("early", 1), gang("big", 3), gang("late", 1))
    plan = run_cycle(Cluster(one_cpu_nodes(2), jobs, (), config))
    assert (plan.tasks["early-0"].status, plan.tasks["late-0"].status) == ("Running", "Pending")


@pytest.mark.parametrize(
    ("depth", "turns", "exhausted"),
    [
        pytest.param(0, [(1, None), (1, None)], False, id="no-miss-no-bound"),
        pytest.param(0, [(1, 0)], True, id="a-miss-spends-depth-0"),
        pytest.param(2, [(1, 0), (1, None)], False, id="one-try-after-the-miss-of-two"),
        pytest.param(2, [(1, 0), (1, None), (1, 0)], True, id="two-tries-after-the-miss-spend-two"),
        pytest.param(2, [(5, 2)], True, id="a-run-counts-its-jobs-after-its-first-miss"),
        pytest.param(None, [(1, 0), (9, 0)], False, id="no-depth-never-runs-out"),
    ],
)
def test_the_budget_counts_the_jobs_tried_after_the_first_miss(
    depth: int | None, turns: list[tuple[int, int | None]], exhausted: bool
) -> None:
    budget = DepthBudget(depth)
    for jobs, first_miss in turns:
        budget.count(jobs, first_miss)
    assert budget.exhausted() is exhausted


def test_a_negative_depth_in_a_scenario_config_is_refused_with_its_path() -> None:
    with pytest.raises(ScenarioError) as refused:
        as_config({"backfill_depth": -1})
    assert refused.value.path == "config.backfill_depth"


@settings(max_examples=100)
@given(clusters(with_queues=True))
def test_a_depth_as_deep_as_the_job_list_decides_as_no_depth_at_all(cluster: Cluster) -> None:
    deep = replace(cluster, config=replace(cluster.config, backfill_depth=len(cluster.jobs) * 4))
    unbounded, bounded = run_cycle(cluster), run_cycle(deep)
    assert bounded.decisions == unbounded.decisions
    assert dict(bounded.explanations) == dict(unbounded.explanations)


def test_a_job_allocate_does_not_reach_is_not_reached_by_the_later_actions_either() -> None:
    """Two gangs that cannot run (never moved: not preemptible) spend allocate's depth of 1; the one-task
    job after them would fit an idle node, but consolidate (which looks only at preemptible jobs, so
    meets it first, and has a running job to consider moving) may not place it: only allocate binds a
    Pipelined task, and it did not reach the job."""
    running = Job("r", (Task("r-0", "r", {"cpu": 1000}, TaskStatus.RUNNING, "node-2"),))
    stuck = tuple(replace(gang(name, 3), preemptible=False) for name in ("big", "bigger"))
    jobs = (running, *stuck, gang("small", 1))
    plan = run_cycle(Cluster(one_cpu_nodes(3), jobs, (), SchedulerConfig(backfill_depth=1)))
    assert plan.decisions == []
    assert plan.explanations["small-0"].reason == (
        "not tried in this cycle: backfill_depth 1 reached (1 jobs tried after the first that got nothing)"
    )
    unbounded = run_cycle(Cluster(one_cpu_nodes(3), jobs, (), SchedulerConfig()))
    assert unbounded.tasks["small-0"].status == "Running"  # allocate reaches it: bound
