"""One scheduling session: the snapshot, its placement engine, the open Statement, the queue state and
what the actions decided so far. Every action of a cycle runs on the same session, so later actions
see what earlier ones committed (KAI's semantics).

Queue usage is kept in step with the Statement by a listener: a task that starts counting as allocated
(bound or pipelined) is added to its job's leaf queue and every ancestor, and removed when it stops
(evicted, or rolled back), so ordering and limit checks always see the simulated state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import numpy as np
import numpy.typing as npt

from loadmaster.core.columns.input_sums import sum_by_group
from loadmaster.core.columns.snapshot import ClusterSnapshot, SnapshotCache
from loadmaster.core.model import DEFAULT_QUEUE, Cluster, Queue
from loadmaster.core.working.decisions import Decision
from loadmaster.core.working.statement import Statement
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


def _queues_with_default(snapshot: ClusterSnapshot) -> tuple[Queue, ...]:
    """The listed queues, plus the implicit top-level ``default`` queue when a job uses it unlisted."""
    queues = snapshot.cluster.queues
    if DEFAULT_QUEUE in snapshot.queue_names and all(q.name != DEFAULT_QUEUE for q in queues):
        return (*queues, Queue(DEFAULT_QUEUE))
    return queues


def _count_in_queue(snapshot: ClusterSnapshot, queues: QueueState, t: int, delta: int) -> None:
    """The statement's listener: queue usage follows each allocation. Not a bound method of the session:
    the statement would hold the session that holds it, a cycle that keeps a cycle's arrays until the
    collector runs (a NASA x3 replay held three times the memory between collections)."""
    j = int(snapshot.task_job[t])
    leaf, preemptible = int(queues.job_leaf[j]), snapshot.jobs[j].preemptible
    queues.usage.shift(leaf, snapshot.task_request[:, t], preemptible, delta)


def _open_queues(snapshot: ClusterSnapshot) -> QueueState:
    """Demand and usage come from the snapshot's per-queue sums (carried across cycles), so opening
    costs a step per queue, not per task."""
    tree = QueueTree.build(_queues_with_default(snapshot), snapshot.resources)
    leaf_of_code = np.array([tree.index_of(name) for name in snapshot.queue_names], dtype=np.int64)
    sums = snapshot.input_sums
    usage = QueueUsage.empty(tree)
    for flag in (True, False):
        charged = sum_by_group(sums.queue_running[int(flag)].T, leaf_of_code, tree.size)
        for leaf in np.flatnonzero(charged.any(axis=1)):
            usage.allocate(int(leaf), charged[leaf], flag)
    demand = np.ascontiguousarray(sum_by_group(sums.queue_request.T, leaf_of_code, tree.size).T)
    total = (snapshot.node_alloc * snapshot.node_ready[None, :]).sum(axis=1)
    fair_share = compute_fair_share(tree, total, demand)
    return QueueState(tree, usage, fair_share, demand, leaf_of_code[snapshot.job_queue_code])


StateStamp = tuple[int, int]  # (decisions made so far, the open statement's length): Session.state_stamp


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
    # jobs allocate did not reach once ``config.backfill_depth`` was (actions/backfill_depth.py), with why
    untried: dict[int, str] = field(default_factory=dict)
    # jobs an evicting action left out because their search rests (core/search_backoff.py), with why: the
    # reason of those of their tasks that no action gave one (the first action's, as ``pending_reasons``)
    resting: dict[int, str] = field(default_factory=dict)
    # the victim searches run so far, in order: (action, job, found a victim set), for the control plane's
    # failed-search backoff (core/search_backoff.py)
    searches: list[tuple[str, int, bool]] = field(default_factory=list)

    @classmethod
    def open(cls, cluster: Cluster, now_s: float = 0.0, cache: SnapshotCache | None = None) -> Session:
        """``cache``: what the previous cycle's snapshot can lend this one (``core/columns/snapshot.py``)."""
        snapshot = ClusterSnapshot(cluster, cache)
        engine = PlacementEngine(snapshot, profile_for(cluster.config))
        session = cls(snapshot, engine, Statement(snapshot), _open_queues(snapshot), now_s)
        session.statement.listeners.append(partial(_count_in_queue, snapshot, session.queues))
        return session

    def reason_of(self, t: int) -> str:
        """Why Pending task t got nothing although nodes may fit it ("" when no action said)."""
        if self.untried:
            untried = self.untried.get(int(self.snapshot.task_job[t]))
            if untried is not None:
                return untried
        reason = self.pending_reasons.get(t)
        if reason is None and self.resting:
            reason = self.resting.get(int(self.snapshot.task_job[t]))
        return reason or ""

    def request_of(self, tasks: list[int]) -> IntArray:
        """The tasks' summed request (a new array)."""
        if len(tasks) == 1:  # the common case (an elastic extra, a one-task job), ten times cheaper
            return np.array(self.snapshot.task_request[:, tasks[0]], dtype=np.int64)
        return np.asarray(self.snapshot.task_request[:, tasks].sum(axis=1), dtype=np.int64)

    def state_stamp(self) -> StateStamp:
        """The working state's name within one action: the decisions made so far and the open
        statement's length. Actions only add decisions and roll failed attempts back, so an equal stamp
        is the same state (what the per-state memos of ``actions/`` compare)."""
        return len(self.decisions), self.statement.checkpoint()

    def commit(self, reason: str | None = None) -> None:
        """Make the statement permanent; ``reason`` (when given) explains every decision it holds."""
        self.decisions.extend(self.statement.commit(reason))
