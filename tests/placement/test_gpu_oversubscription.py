"""Whether a cycle is oversubscribed (placement/gpu_oversubscription.py): the pending GPU work beyond the
free GPUs, and that it is the same before and after a placement."""

from __future__ import annotations

from loadmaster.core.model import Cluster, Job, Node, Task, TaskStatus
from loadmaster.core.snapshot import ClusterSnapshot
from loadmaster.core.statement import Statement
from loadmaster.placement.gpu_oversubscription import gpu_oversubscribed, pending_gpu_excess

GI = 2**30


def node(name: str, gpus: int) -> Node:
    alloc = {"cpu": 64_000, "memory": 256 * GI} | ({"gpu": gpus * 1000} if gpus else {})
    return Node(name, alloc, alloc)


def job(name: str, gpu: int, on: str | None = None) -> Job:
    request = {"cpu": 1000, "memory": GI} | ({"gpu": gpu} if gpu else {})
    status = TaskStatus.RUNNING if on else TaskStatus.PENDING
    return Job(name, (Task(name, name, request, status, on),))


def snapshot_of(nodes: list[Node], jobs: list[Job]) -> ClusterSnapshot:
    return ClusterSnapshot(Cluster(tuple(nodes), tuple(jobs)))


def test_the_excess_is_the_pending_gpu_work_beyond_the_free_gpus() -> None:
    # 8 GPUs, 1 running: 7 free; pending 4 + 4 + 0.5 (and a cpu-only task, which asks for none)
    jobs = [job("run", 1000, on="a"), job("p1", 4000), job("p2", 4000), job("p3", 500), job("cpu", 0)]
    assert pending_gpu_excess(snapshot_of([node("a", 4), node("b", 4), node("c", 0)], jobs)) == 1500


def test_placing_a_task_leaves_the_excess_unchanged() -> None:
    snapshot = snapshot_of([node("a", 4)], [job("p1", 3000), job("p2", 2000)])
    before = pending_gpu_excess(snapshot)
    Statement(snapshot).allocate(0, 0)
    assert before == pending_gpu_excess(snapshot) == 1000


def test_a_cycle_is_oversubscribed_only_beyond_a_tenth_of_the_capacity() -> None:
    # 10 GPUs free: pending 11 GPUs is an excess of exactly a tenth, 11.1 GPUs is more
    nodes = [node("a", 8), node("b", 2)]
    assert not gpu_oversubscribed(snapshot_of(nodes, [job("p1", 8000), job("p2", 3000)]))
    assert gpu_oversubscribed(snapshot_of(nodes, [job("p1", 8000), job("p2", 3100)]))


def test_a_cluster_without_gpus_is_never_oversubscribed() -> None:
    assert not gpu_oversubscribed(snapshot_of([node("a", 0)], [job("p", 1000)]))
