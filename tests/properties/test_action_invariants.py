"""Safety of the evicting actions and of queue limits over random clusters with a queue tree."""

from __future__ import annotations

from hypothesis import given, settings

from loadmaster.core.model import Cluster
from loadmaster.cycle import run_cycle
from tests.properties.strategies import clusters

FINAL = ("Running", "Pipelined", "Moved")
SETTINGS = settings(max_examples=120)


@SETTINGS
@given(clusters(with_queues=True))
def test_only_preemptible_tasks_are_evicted_or_moved_and_only_by_the_rules(cluster: Cluster) -> None:
    plan = run_cycle(cluster)
    job_of = {t.name: job for job in cluster.jobs for t in job.tasks}
    placed_by: dict[str, list] = {}
    for d in plan.decisions:
        if d.kind in ("bind", "pipeline"):
            placed_by.setdefault(d.action, []).append(job_of[d.task])
    for d in plan.decisions:
        if d.kind not in ("evict", "move"):
            continue
        victim = job_of[d.task]
        if d.action == "stale_gang_eviction":
            assert sum(plan.tasks[t.name].status in FINAL for t in victim.tasks) == 0
            continue
        assert victim.preemptible, f"{d.task} is not preemptible but {d.action} evicted it"
        preemptors = placed_by.get(d.action, [])
        assert preemptors, f"{d.action} evicted {d.task} but placed nothing"
        if d.action == "preempt":
            assert any(p.queue == victim.queue and p.priority > victim.priority for p in preemptors)
        if d.action == "reclaim":
            assert any(p.queue != victim.queue for p in preemptors)
        if d.action == "consolidate":
            assert d.kind == "move" or plan.tasks[d.task].status == "Running"


@SETTINGS
@given(clusters(with_queues=True))
def test_queue_limits_hold_at_every_level(cluster: Cluster) -> None:
    plan = run_cycle(cluster)
    parent = {q.name: q.parent for q in cluster.queues}
    limits = {q.name: q.limit.get("cpu") for q in cluster.queues}

    def cpu_by_queue(statuses: tuple[str, ...], input_running: bool) -> dict[str, int]:
        totals: dict[str, int] = {}
        for job in cluster.jobs:
            for task in job.tasks:
                counted = (task.status.value == "Running") if input_running else (
                    plan.tasks[task.name].status in statuses)  # fmt: skip
                if counted:
                    queue: str | None = job.queue
                    while queue is not None:
                        totals[queue] = totals.get(queue, 0) + task.request.get("cpu", 0)
                        queue = parent.get(queue)
        return totals

    before, after = cpu_by_queue((), True), cpu_by_queue(FINAL, False)
    for queue, limit in limits.items():
        if limit is not None:
            assert after.get(queue, 0) <= max(limit, before.get(queue, 0)), (
                f"queue {queue} over its cpu limit"
            )


@SETTINGS
@given(clusters(with_queues=True))
def test_the_same_input_gives_the_same_plan_with_all_actions(cluster: Cluster) -> None:
    first, second = run_cycle(cluster), run_cycle(cluster)
    assert first.tasks == second.tasks and first.decisions == second.decisions
