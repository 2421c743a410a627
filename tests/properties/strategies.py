"""Hypothesis strategies for random small clusters (shared by the property tests)."""

from __future__ import annotations

from hypothesis import strategies as st

from loadmaster.core.model import Cluster, Job, Node, Queue, Taint, Task, TaskStatus, Toleration
from loadmaster.cycle import CyclePlan

CPU_STEP, MEMORY_STEP = 250, 256 * 2**20


@st.composite
def clusters(
    draw: st.DrawFn,
    max_nodes: int = 6,
    max_jobs: int = 8,
    with_running: bool = True,
    with_queues: bool = False,
) -> Cluster:
    n_nodes = draw(st.integers(1, max_nodes))
    nodes = []
    for i in range(n_nodes):
        alloc = {
            "cpu": draw(st.integers(1, 16)) * 1000,
            "memory": draw(st.integers(1, 32)) * 2**30,
            "gpu": draw(st.sampled_from([0, 0, 1, 2, 4])) * 1000,
        }
        taints = (Taint("dedicated", "ml", "NoSchedule"),) if draw(st.integers(0, 5)) == 0 else ()
        nodes.append(Node(
            name=f"node-{i}", capacity=alloc, allocatable=alloc,
            labels={"zone": draw(st.sampled_from(["a", "b", "c"]))},
            state=draw(st.sampled_from(["Ready", "Ready", "Ready", "NotReady"])),
            unschedulable=draw(st.integers(0, 6)) == 0, taints=taints,
        ))  # fmt: skip
    used = {n.name: dict.fromkeys(("cpu", "memory", "gpu"), 0) for n in nodes}
    jobs = []
    for j in range(draw(st.integers(1, max_jobs))):
        size = draw(st.integers(1, 4))
        gpu = draw(st.sampled_from([0, 0, 0, 500, 1000]))
        request = {
            "cpu": draw(st.integers(1, 12)) * CPU_STEP,
            "memory": draw(st.integers(1, 12)) * MEMORY_STEP,
        }
        if gpu:
            request["gpu"] = gpu
        tasks = []
        for k in range(size):
            status, node = TaskStatus.PENDING, None
            # Running GPU tasks hold whole devices, so a sum-level fit is also a device-level fit.
            if with_running and gpu != 500 and draw(st.integers(0, 3)) == 0:
                host = nodes[draw(st.integers(0, n_nodes - 1))]
                fits = all(
                    used[host.name][r] + request.get(r, 0) <= host.allocatable[r] for r in used[host.name]
                )
                if fits:
                    for r in used[host.name]:
                        used[host.name][r] += request.get(r, 0)
                    status, node = TaskStatus.RUNNING, host.name
            tolerations = (Toleration("dedicated", "Exists"),) if draw(st.booleans()) else ()
            tasks.append(
                Task(f"job-{j}-{k}", f"job-{j}", dict(request), status, node, tolerations=tolerations)
            )
        min_available = draw(st.integers(1, size))
        queue = draw(st.sampled_from(["team-a", "team-b"])) if with_queues else "default"
        priority = draw(st.sampled_from([10, 50, 100]))
        jobs.append(
            Job(f"job-{j}", tuple(tasks), priority=priority, min_available=min_available, queue=queue)
        )
    queues: tuple[Queue, ...] = ()
    if with_queues:

        def limit() -> dict[str, int]:
            return {"cpu": draw(st.integers(1, 12)) * 1000} if draw(st.booleans()) else {}

        queues = (
            Queue("org", limit=limit()),
            Queue("team-a", parent="org", deserved={"cpu": draw(st.integers(0, 8)) * 1000}, limit=limit()),
            Queue("team-b", parent="org", deserved={"cpu": draw(st.integers(0, 8)) * 1000}, limit=limit(),
                  over_quota_weight=draw(st.sampled_from([0.0, 1.0, 2.0]))),
        )  # fmt: skip
    return Cluster(tuple(nodes), tuple(jobs), queues)


# Task shapes that leave nodes in fragments, and pending shapes larger than most fragments (the
# consolidation properties: one_move, landing, reprieve_room).
FRAGMENTS = (
    {"cpu": 1000},
    {"cpu": 2000, "memory": 2**30},
    {"cpu": 500, "memory": 3 * 2**30},
    {"memory": 2**31},
)
LARGER = (
    {"cpu": 3000},
    {"cpu": 2000},
    {"cpu": 2000, "memory": 3 * 2**30},
    {"cpu": 1000, "memory": 4 * 2**30},
)


def fragmented_nodes(draw: st.DrawFn, least: int, most: int, cordon: bool = False) -> list[Node]:
    """``least``..``most`` nodes of 3-6 cores and 4-8 GiB in two zones (``cordon``: maybe one cordoned)."""
    count = draw(st.integers(least, most))
    cordoned = draw(st.integers(-1, count - 1)) if cordon else -1
    return [
        Node(f"node-{i}", alloc, alloc, labels={"zone": f"z{i % 2}"}, unschedulable=i == cordoned)
        for i, alloc in enumerate(
            {"cpu": draw(st.integers(3, 6)) * 1000, "memory": draw(st.integers(4, 8)) * 2**30}
            for _ in range(count)
        )
    ]


def waiting_jobs(
    draw: st.DrawFn, largest: int, selectors: tuple[dict[str, str], ...], drawn_minimum: bool = True
) -> list[Job]:
    """One to four pending jobs of up to ``largest`` tasks shaped ``LARGER`` or ``FRAGMENTS``, a node
    selector drawn from ``selectors``, and a drawn ``min_available`` (else 1: elastic, one task searched
    at a time)."""
    jobs = []
    for j in range(draw(st.integers(1, 4))):
        shape = draw(st.sampled_from(LARGER + FRAGMENTS))
        selector = draw(st.sampled_from(selectors))
        size = draw(st.integers(1, largest))
        tasks = tuple(
            Task(f"wait-{j}-{k}", f"wait-{j}", dict(shape), node_selector=selector) for k in range(size)
        )
        jobs.append(Job(f"wait-{j}", tasks, min_available=draw(st.integers(1, size)) if drawn_minimum else 1))
    return jobs


def running_jobs(
    draw: st.DrawFn,
    nodes: list[Node],
    shapes: tuple[dict[str, int], ...],
    jobs: int,
    tasks: int,
    elastic_minimum: bool = False,
) -> list[Job]:
    """Up to ``jobs`` Running jobs of up to ``tasks`` tasks each, every task on a drawn node where it
    still fits (a task that would not fit is left out, so nodes fill in fragments); priority 10 or 50,
    and with ``elastic_minimum`` a drawn ``min_available`` (whole-job units and task units)."""
    free = {node.name: dict(node.allocatable) for node in nodes}
    drawn = []
    for j in range(draw(st.integers(1, jobs))):
        shape = draw(st.sampled_from(shapes))
        placed = []
        for k in range(draw(st.integers(1, tasks))):
            node = draw(st.sampled_from([n.name for n in nodes]))
            if all(free[node].get(r, 0) >= amount for r, amount in shape.items()):
                for r, amount in shape.items():
                    free[node][r] -= amount
                placed.append(Task(f"run-{j}-{k}", f"run-{j}", dict(shape), TaskStatus.RUNNING, node))
        if placed:
            minimum = draw(st.integers(1, len(placed))) if elastic_minimum else 1
            priority = draw(st.sampled_from([10, 50]))
            drawn.append(Job(f"run-{j}", tuple(placed), priority=priority, min_available=minimum))
    return drawn


def assert_same_cycle(fast: CyclePlan, plain: CyclePlan) -> None:
    """Two plans of one cluster agree on every task's state, every decision and every explanation."""
    assert dict(fast.tasks) == dict(plain.tasks)
    assert fast.decisions == plain.decisions
    assert dict(fast.explanations) == dict(plain.explanations)
