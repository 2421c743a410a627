"""With one move left, consolidate does not search a job whose first task fits nowhere when no running
task could be that move, and asks only the nodes holding a unit with such a task for an offer
(actions/victims/one_move.py): a cycle decides and explains the same as with every node asked (a node
or a search left out that would have given a valid offer changes the decisions)."""

from __future__ import annotations

import dataclasses
from unittest.mock import patch

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

from loadmaster.actions.victims.one_move import OneMoveLanding
from loadmaster.core.model import Cluster, Job, Node, SchedulerConfig, Task, TaskStatus
from loadmaster.core.voluntary_moves import VoluntaryMoves
from loadmaster.cycle import run_cycle
from tests.properties.strategies import (
    FRAGMENTS,
    assert_same_cycle,
    fragmented_nodes,
    running_jobs,
    waiting_jobs,
)


def local_jobs(draw: st.DrawFn, nodes: list[Node]) -> list[Job]:
    """Running elastic jobs that each keep to one node (whole-job units on one node, so a node holding
    none of the possible moves is common), filling the nodes in fragments."""
    jobs = []
    for i, node in enumerate(nodes):
        free = dict(node.allocatable)
        for j in range(draw(st.integers(1, 3))):
            shape = draw(st.sampled_from(FRAGMENTS))
            placed = []
            for k in range(draw(st.integers(1, 4))):
                if all(free.get(r, 0) >= amount for r, amount in shape.items()):
                    for r, amount in shape.items():
                        free[r] -= amount
                    placed.append(
                        Task(f"run-{i}-{j}-{k}", f"run-{i}-{j}", dict(shape), TaskStatus.RUNNING, node.name)
                    )
            if placed:
                minimum = draw(st.integers(1, len(placed)))
                jobs.append(
                    Job(
                        f"run-{i}-{j}",
                        tuple(placed),
                        priority=draw(st.sampled_from([10, 50])),
                        min_available=minimum,
                    )
                )
    return jobs


def growing(job: Job) -> Job:
    """The running job with one more task Pending, like its last: allocate may place it in the cycle, and a
    job with a task placed in the cycle offers no unit (alibaba-2017's running jobs, mostly)."""
    last = job.tasks[-1]
    extra = Task(f"{job.name}-more", job.name, dict(last.request))
    return Job(job.name, (*job.tasks, extra), priority=job.priority, min_available=job.min_available)


@st.composite
def crowded(draw: st.DrawFn) -> Cluster:
    """Nodes filled in fragments by elastic jobs (whole-job units and task units; a zone selector on
    some pending tasks), pending jobs larger than most fragments (one task, or a small gang), a budget
    of one or two moves and several ratios: single moves that fit, and ones that cannot."""
    nodes = fragmented_nodes(draw, 3, 7)
    jobs = (
        running_jobs(draw, nodes, FRAGMENTS, jobs=7, tasks=6, elastic_minimum=True)
        if draw(st.booleans())
        else local_jobs(draw, nodes)
    )
    jobs = [growing(job) if draw(st.booleans()) else job for job in jobs]
    ledger = None
    if draw(st.booleans()):  # the control plane's move ledger: tasks in their cooldown, closed nodes
        names = [node.name for node in nodes]
        closed = draw(st.sets(st.sampled_from(names), max_size=len(names) - 1))
        ledger = VoluntaryMoves(NOW_S, frozenset(closed))
        jobs = [with_binds(draw, job) for job in jobs]
    jobs += waiting_jobs(draw, largest=2, selectors=({}, {}, {"zone": "z0"}))
    config = SchedulerConfig(
        actions=("allocate", "consolidate"),
        max_consolidation_moves=draw(st.sampled_from([1, 1, 2])),
        max_eviction_ratio=draw(st.sampled_from([0.3, 0.5, 1.0, 2.0, 100.0])),
        backfill_depth=draw(st.sampled_from([None, 2])),
        voluntary_moves=ledger,
    )
    return Cluster(tuple(nodes), tuple(jobs), (), config)


NOW_S = 10_000.0


def with_binds(draw: st.DrawFn, job: Job) -> Job:
    """Each Running task bound at no known time, within its cooldown, or before it."""
    binds = st.sampled_from([None, NOW_S - 60, NOW_S - 5_000])
    tasks = tuple(
        dataclasses.replace(t, bound_at_s=draw(binds)) if t.status == TaskStatus.RUNNING else t
        for t in job.tasks
    )
    return dataclasses.replace(job, tasks=tasks)


@settings(max_examples=500)
@given(crowded())
def test_a_cycle_decides_and_explains_the_same_with_nodes_left_out_of_one_move_searches(
    cluster: Cluster,
) -> None:
    walks: list[tuple[int, int]] = []  # (nodes asked, nodes in all)
    original = OneMoveLanding.walk

    def recording(self, job, tasks):  # type: ignore[no-untyped-def]
        found = original(self, job, tasks)
        walks.append((int(found.sum()), found.size))
        return found

    def every_node(self, job, tasks):  # type: ignore[no-untyped-def]
        return np.ones(self._session.snapshot.n_nodes, dtype=np.bool_)

    with patch.object(OneMoveLanding, "walk", recording):
        fast = run_cycle(cluster)
    with patch.object(OneMoveLanding, "walk", every_node):
        plain = run_cycle(cluster)
    event("a search ruled out" if any(asked == 0 for asked, _ in walks) else "none ruled out")
    event("nodes left out" if any(0 < asked < size for asked, size in walks) else "no node left out")
    event("moves made" if any(d.kind == "move" for d in plain.decisions) else "no move")
    event("with the move ledger" if cluster.config.voluntary_moves is not None else "no ledger")
    event(
        "a running job grew"
        if any(d.task.endswith("-more") and d.kind == "bind" for d in plain.decisions)
        else "none grew"
    )
    assert_same_cycle(fast, plain)
