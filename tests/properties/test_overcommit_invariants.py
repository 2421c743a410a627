"""Overcommit (B8) over random clusters: after one cycle of every action, on every node and for cpu and
memory, the tasks that did not opt in fit plain allocatable, and all tasks fit allocatable x factor."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.core.model import Cluster, Job, Node, Task
from loadmaster.core.overcommit import overcommitted_amount
from loadmaster.cycle import run_cycle
from tests.properties.strategies import clusters

HOLDING = ("Running", "Pipelined", "Moved")  # where a task holds room once the cycle's plan is applied


@st.composite
def overcommitted_clusters(draw: st.DrawFn) -> Cluster:
    """A random cluster whose nodes may declare factors and whose jobs may opt in (running tasks stay
    within plain allocatable, as the base strategy makes them)."""
    cluster = draw(clusters(with_queues=draw(st.booleans())))
    factors = st.sampled_from([1.0, 1.25, 1.5, 2.0, 3.0])
    nodes = tuple(
        replace(node, overcommit={"cpu": draw(factors), "memory": draw(factors)})
        if draw(st.booleans())
        else node
        for node in cluster.nodes
    )
    jobs = []
    for job in cluster.jobs:
        opted_in = draw(st.booleans())
        jobs.append(replace(job, tasks=tuple(replace(t, overcommit=opted_in) for t in job.tasks)))
    return replace(cluster, nodes=nodes, jobs=tuple(jobs))


@settings(max_examples=150)
@given(overcommitted_clusters())
def test_work_not_opted_in_fits_allocatable_and_all_work_fits_allocatable_times_factor(
    cluster: Cluster,
) -> None:
    plan = run_cycle(cluster)
    plain: dict[tuple[str, str], int] = {}
    total: dict[tuple[str, str], int] = {}
    for job in cluster.jobs:
        for task in job.tasks:
            outcome = plan.tasks[task.name]
            if outcome.status not in HOLDING or outcome.node is None:
                continue
            for resource in ("cpu", "memory"):
                key = (outcome.node, resource)
                amount = task.request.get(resource, 0)
                total[key] = total.get(key, 0) + amount
                if not task.overcommit:
                    plain[key] = plain.get(key, 0) + amount
    for node in cluster.nodes:
        for resource in ("cpu", "memory"):
            allocatable = node.allocatable.get(resource, 0)
            bound = overcommitted_amount(allocatable, node.overcommit.get(resource, 1.0))
            assert plain.get((node.name, resource), 0) <= allocatable, (node.name, resource)
            assert total.get((node.name, resource), 0) <= bound, (node.name, resource)


def test_an_opted_in_job_fills_a_node_past_allocatable_up_to_the_factor() -> None:
    """The liveness side: the room is really used (not just allowed)."""
    node = Node("node-0", {"cpu": 4000}, {"cpu": 4000}, overcommit={"cpu": 1.5})
    tasks = tuple(Task(f"t-{k}", "batch", {"cpu": 1000}, overcommit=True) for k in range(8))
    plan = run_cycle(Cluster((node,), (Job("batch", tasks),)))
    assert sum(plan.tasks[t.name].status == "Running" for t in tasks) == 6
