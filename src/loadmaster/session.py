"""One scheduling session: the snapshot, its placement engine, the open Statement, the queue state and
what the actions decided so far. Every action of a cycle runs on the same session, so later actions
see what earlier ones committed (KAI's semantics).

Queue usage is kept in step with the Statement by a listener: a task that starts counting as allocated
(bound or pipelined) is added to its job's leaf queue and every ancestor, and removed when it stops
(evicted, or rolled back), so ordering and limit checks always see the simulated state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from loadmaster.core.decisions import Decision
from loadmaster.core.model import DEFAULT_QUEUE, Cluster, Queue
from loadmaster.core.snapshot import BOUND, ClusterSnapshot, SnapshotCache
from loadmaster.core.statement import Statement
from loadmaster.placement.engine import PlacementEngine
from loadmaster.placement.profile import profile_for
from loadmaster.queues.hierarchy import QueueTree
from loadmaster.queues.shares import compute_fair_share
from loadmaster.queues.usage import QueueUsage

IntArray = npt.NDArray[np.int64]


@dataclass(slots=True)
class QueueState:
    tree: QueueTree
    usage: QueueUsage
    fair_share: IntArray  # [R, Q], computed once when the session opens (KAI: once per cycle)
    demand: IntArray  # [R, Q] allocated + pending request per leaf, the fair share's input
    job_leaf: npt.NDArray[np.int64]  # [J] leaf queue of each job


def _queues_with_default(cluster: Cluster) -> tuple[Queue, ...]:
    """The listed queues, plus the implicit top-level ``default`` queue when a job uses it unlisted."""
    names = {q.name for q in cluster.queues}
    if DEFAULT_QUEUE not in names and any(job.queue == DEFAULT_QUEUE for job in cluster.jobs):
        return (*cluster.queues, Queue(DEFAULT_QUEUE))
    return cluster.queues


def sum_by_group(values: IntArray, groups: npt.NDArray[np.int64], size: int) -> IntArray:
    """[size, R]: row g sums the columns of ``values`` [R, T] whose ``groups`` entry is g (exact int64;
    np.add.at does the same an element at a time, 10x slower)."""
    totals = np.zeros((size, values.shape[0]), dtype=np.int64)
    if not len(groups):
        return totals
    order = np.argsort(groups, kind="stable")
    ordered = groups[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    totals[ordered[starts]] = np.add.reduceat(values[:, order], starts, axis=1).T
    return totals


def _open_queues(snapshot: ClusterSnapshot) -> QueueState:
    tree = QueueTree.build(_queues_with_default(snapshot.cluster), snapshot.resources)
    queue_names = snapshot.job_queue
    leaf_of = {name: tree.index_of(name) for name in set(queue_names)}
    job_leaf = np.fromiter(map(leaf_of.__getitem__, queue_names), dtype=np.int64, count=len(queue_names))
    usage = QueueUsage.empty(tree)
    # Sum requests per leaf first (one numpy call), then charge each (leaf, preemptible) group once:
    # 50,000 running tasks cost a handful of queue updates, not 50,000.
    task_leaf = job_leaf[snapshot.task_job]
    demand = sum_by_group(snapshot.task_request, task_leaf, tree.size)
    preemptible = snapshot.job_preemptible[snapshot.task_job]
    bound = snapshot.state.task_phase == BOUND
    for flag in (True, False):
        chosen = bound & (preemptible == flag)
        charged = sum_by_group(snapshot.task_request[:, chosen], task_leaf[chosen], tree.size)
        for leaf in np.flatnonzero(charged.any(axis=1)):
            usage.allocate(int(leaf), charged[leaf], flag)
    demand = np.ascontiguousarray(demand.T)
    total = (snapshot.node_alloc * snapshot.node_ready[None, :]).sum(axis=1)
    fair_share = compute_fair_share(tree, total, demand)
    return QueueState(tree, usage, fair_share, demand, job_leaf)


@dataclass(slots=True)
class Session:
    snapshot: ClusterSnapshot
    engine: PlacementEngine
    statement: Statement
    queues: QueueState
    now_s: float = 0.0
    decisions: list[Decision] = field(default_factory=list)
    # why a task got nothing although it may have had feasible nodes (gang, quota, ...), by task index
    pending_reasons: dict[int, str] = field(default_factory=dict)

    @classmethod
    def open(cls, cluster: Cluster, now_s: float = 0.0, cache: SnapshotCache | None = None) -> Session:
        """``cache``: what the previous cycle's snapshot can lend this one (``core/snapshot.py``)."""
        snapshot = ClusterSnapshot(cluster, cache)
        engine = PlacementEngine(snapshot, profile_for(cluster.config))
        session = cls(snapshot, engine, Statement(snapshot), _open_queues(snapshot), now_s)
        session.statement.listeners.append(session._count_in_queue)
        return session

    def _count_in_queue(self, t: int, delta: int) -> None:
        j = int(self.snapshot.task_job[t])
        leaf, preemptible = int(self.queues.job_leaf[j]), self.snapshot.jobs[j].preemptible
        self.queues.usage.shift(leaf, self.snapshot.task_request[:, t], preemptible, delta)

    def request_of(self, tasks: list[int]) -> IntArray:
        """The tasks' summed request (a new array)."""
        if len(tasks) == 1:  # the common case (an elastic extra, a one-task job), ten times cheaper
            return np.array(self.snapshot.task_request[:, tasks[0]], dtype=np.int64)
        return np.asarray(self.snapshot.task_request[:, tasks].sum(axis=1), dtype=np.int64)

    def commit(self, reason: str | None = None) -> None:
        """Make the statement permanent; ``reason`` (when given) explains every decision it holds."""
        self.decisions.extend(self.statement.commit(reason))
