"""With one move left, consolidate does not search a job whose first task fits nowhere when no running
task could be that move, and asks only the nodes holding a unit with such a task for an offer, each
bounded by the least disruptive of those units (actions/victims/one_move.py): a cycle decides and
explains the same as with every node asked by the plain walk (a node or a search left out, or a bound
too high, that would have given the best valid offer changes the decisions)."""

from __future__ import annotations

import dataclasses
from unittest.mock import patch

from hypothesis import event, given, settings
from hypothesis import strategies as st

from loadmaster.actions.victims.fit import first_fits_nowhere
from loadmaster.actions.victims.index import VictimIndex
from loadmaster.actions.victims.one_move import OneMoveLanding
from loadmaster.core.model import Cluster, Job, Node, SchedulerConfig, Task, TaskStatus
from loadmaster.core.voluntary_moves import VoluntaryMoves
from loadmaster.cycle import run_cycle
from loadmaster.session import Session
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
        walks.append((len(found), self._session.snapshot.n_nodes))
        return found

    def every_node(self, job, tasks):  # type: ignore[no-untyped-def]
        return None  # the walk of every node, each bounded by its best single unit of any kind

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


@settings(max_examples=300)
@given(crowded())
def test_the_one_move_walk_bounds_each_node_by_its_least_disruptive_unit_holding_a_possible_move(
    cluster: Cluster,
) -> None:
    """The walk's nodes and bounds, against the units themselves: a node is walked iff one of its units
    holds a task that could be the move, and its bound is the least ``solo_key`` of those units."""
    session = Session.open(cluster)
    snapshot = session.snapshot
    index = VictimIndex(session, lambda _, v: snapshot.jobs[v].preemptible, lambda _: ())
    landing = OneMoveLanding(index)
    pool = index.pool(0)
    for j in range(len(snapshot.jobs)):
        tasks = [t for t in snapshot.job_tasks[j] if snapshot.tasks[t].status == TaskStatus.PENDING]
        if not tasks or not first_fits_nowhere(session, tasks):
            continue
        walked = landing.walk(j, tasks)
        _, movers = landing._now()
        moves = set(landing.tasks[movers[landing._possible(movers, j, tasks)]].tolist())
        expected = []
        for n in range(snapshot.n_nodes):
            holding = [u for u in index.on(n, pool, j, set()) if moves.intersection(u.tasks)]
            if holding:
                expected.append((min(u.solo_key for u in holding), n))
        event("a task unit's bound" if any(b[1][0][1] for b, _ in walked) else "whole units only")
        assert walked == sorted(expected)
