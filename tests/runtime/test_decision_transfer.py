"""The decide step's request crosses to the worker process as what changed (cluster_transfer.py), and the
worker process decides exactly what the in-process step decides (one implementation)."""

from __future__ import annotations

import dataclasses
import os
import signal
from collections.abc import Iterator

import pytest

from loadmaster.core.model import Cluster, Job, Node, SchedulerConfig, Task, TaskStatus
from loadmaster.runtime.scheduling.deciding.cluster_transfer import (
    ClusterMirror,
    decode_request,
    encode_request,
)
from loadmaster.runtime.scheduling.deciding.deciders import InProcessDecider
from loadmaster.runtime.scheduling.deciding.decision_process import WorkerProcessDecider
from loadmaster.runtime.scheduling.deciding.decision_step import DecidedCycle, DecideRequest

GI = 2**30


def node(index: int, cpu: int = 4000) -> Node:
    capacity = {"cpu": cpu, "memory": 16 * GI}
    return Node(f"node-{index:03d}", capacity, dict(capacity))


def cluster(nodes: int = 50, pending: int = 40, running: int = 10) -> Cluster:
    tasks = [Task(f"web-{i}", "web", {"cpu": 1000, "memory": GI}) for i in range(pending)]
    placed = [
        Task(f"db-{i}", "db", {"cpu": 2000, "memory": 2 * GI}, TaskStatus.RUNNING, f"node-{i:03d}")
        for i in range(running)
    ]
    unfit = [Task(f"huge-{i}", "huge", {"cpu": 64000, "memory": GI}) for i in range(5)]
    jobs = (Job("db", tuple(placed)), Job("web", tuple(tasks)), Job("huge", tuple(unfit)))
    return Cluster(tuple(node(i) for i in range(nodes)), jobs, (), SchedulerConfig())


def same_decisions(one: DecidedCycle, other: DecidedCycle) -> None:
    assert one.plan.decisions == other.plan.decisions
    assert dict(one.plan.tasks) == dict(other.plan.tasks)
    assert one.plan.explanations == other.plan.explanations
    assert one.plan.queues == other.plan.queues


def test_a_second_request_sends_the_nodes_and_tasks_the_worker_holds_by_name() -> None:
    ours, theirs = ClusterMirror(), ClusterMirror()
    first = DecideRequest(cluster(), 100.0)
    first_bytes = encode_request(first, ours)
    decoded_first = decode_request(first_bytes, theirs)
    assert decoded_first == first
    second = DecideRequest(first.cluster, 101.0)
    second_bytes = encode_request(second, ours)
    decoded_second = decode_request(second_bytes, theirs)
    assert decoded_second == second
    assert len(second_bytes) < len(first_bytes) / 2
    # the worker's cluster holds the very objects of its previous one (its snapshot cache reuses them)
    assert all(a is b for a, b in zip(decoded_second.cluster.nodes, decoded_first.cluster.nodes, strict=True))


def test_a_changed_node_or_task_is_sent_whole_and_a_forgotten_mirror_gets_everything() -> None:
    ours, theirs = ClusterMirror(), ClusterMirror()
    before = cluster()
    decode_request(encode_request(DecideRequest(before, 0.0), ours), theirs)
    cordoned = dataclasses.replace(before.nodes[3], unschedulable=True)
    moved = dataclasses.replace(before.jobs[1].tasks[0], request={"cpu": 500, "memory": GI})
    web = dataclasses.replace(before.jobs[1], tasks=(moved, *before.jobs[1].tasks[1:]))
    jobs = (before.jobs[0], web, before.jobs[2])
    after = dataclasses.replace(before, nodes=(*before.nodes[:3], cordoned, *before.nodes[4:]), jobs=jobs)
    assert decode_request(encode_request(DecideRequest(after, 0.0), ours), theirs).cluster == after
    ours.forget()  # a new worker: it holds nothing
    assert decode_request(encode_request(DecideRequest(after, 0.0), ours), ClusterMirror()).cluster == after


@pytest.fixture
def worker() -> Iterator[WorkerProcessDecider]:
    decider = WorkerProcessDecider()
    yield decider
    decider.close()


def test_the_worker_process_decides_what_the_in_process_step_decides(worker: WorkerProcessDecider) -> None:
    here = InProcessDecider()
    first = DecideRequest(cluster(), 100.0, frozenset({"db-0"}), gpu_report_due=True)
    same_decisions(worker.decide(first), here.decide(first))
    # the next cycle, over the same objects (sent by name): still the same plan as in-process
    again = DecideRequest(first.cluster, 160.0)
    same_decisions(worker.decide(again), here.decide(again))


def test_a_cycle_that_raises_in_the_worker_raises_here_and_the_next_one_runs(
    worker: WorkerProcessDecider,
) -> None:
    good = cluster()
    broken = dataclasses.replace(good, config=SchedulerConfig(actions=("allocate", "no_such_action")))
    with pytest.raises(ValueError, match="unknown action no_such_action"):
        worker.decide(DecideRequest(broken, 100.0))
    pid = worker.pid
    same_decisions(
        worker.decide(DecideRequest(good, 100.0)), InProcessDecider().decide(DecideRequest(good, 100.0))
    )
    assert worker.pid == pid  # an error is not a death


def test_a_worker_killed_between_cycles_is_replaced_and_each_death_is_counted() -> None:
    deaths: list[int] = []
    worker = WorkerProcessDecider(on_restart=lambda: deaths.append(1))
    try:
        request = DecideRequest(cluster(), 100.0)
        expected = InProcessDecider().decide(request)
        worker.decide(request)
        first = worker.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        same_decisions(worker.decide(request), expected)
        assert worker.pid not in (None, first)
        assert deaths == [1]
    finally:
        worker.close()
    assert worker.pid is None
