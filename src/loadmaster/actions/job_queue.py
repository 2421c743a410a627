"""The order in which an action considers pending jobs: queue by queue, then job by job.

At each step the queue tree is walked from the top (not over-utilised first, starved first, priority,
dominant share with the job, ...; ``queues.ordering``) to the leaf whose best job goes next; within a
leaf, jobs go by ``job_order_key`` (priority, elastic rank, age). A job that still has tasks to place
after its turn is pushed back with its new key, so elastic extras interleave with other queues, as in
KAI. Shares change as jobs are placed, so the walk is redone for every job: incrementally
(``queues.tournament``), which sees every usage change itself and is told here whenever a leaf's best
job, and so its offer, changes.

The jobs given at the start are filtered and ordered with vector operations (which of them have tasks
to place, and their keys, from per-job counts of Pending and active tasks), and enter a leaf's heap
only when they reach its head: an action that stops early (``backfill_depth``), or skips most jobs at
O(1), spends no Python step on the rest of a long backlog. Keys are the ones the jobs had at the start,
exactly as if each had been pushed then; jobs pushed back later go through the heap.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable

import numpy as np

from loadmaster.actions.gang import active_count, tasks_to_allocate
from loadmaster.core.columns.snapshot import BOUND, PENDING, PIPELINED
from loadmaster.queues.ordering import job_order_key
from loadmaster.queues.tournament import QueueTournament
from loadmaster.session import IntArray, Session

TasksOf = Callable[[Session, int], list[int]]
# Up to this many jobs, pushing each costs less than the vectors over every task (the same order).
FEW = 32
Key = tuple[int, int, int, str]
_NONE: IntArray = np.zeros(0, dtype=np.int64)


class _Leaf:
    """One leaf's waiting jobs: those given at the start, in key order (with their keys' first two
    parts), and a heap of the jobs pushed since. The start's jobs stay arrays, read one at a time as the
    cursor reaches them: an action that stops after a few jobs makes no Python object for the rest."""

    __slots__ = ("cursor", "heap", "initial", "negative_priority", "rank")

    def __init__(self, initial: IntArray = _NONE, negative_priority: IntArray = _NONE,
                 rank: IntArray = _NONE) -> None:  # fmt: skip
        self.initial, self.negative_priority, self.rank = initial, negative_priority, rank
        self.cursor = 0
        self.heap: list[tuple[Key, int]] = []

    def __bool__(self) -> bool:
        return bool(self.heap) or self.cursor < len(self.initial)


class PendingJobs:
    def __init__(self, session: Session, jobs: Iterable[int] | IntArray,
                 tasks_of: TasksOf | None = None) -> None:  # fmt: skip
        self.session = session
        # elastic extras that found no node: skipped, so the job's next task gets its turn
        self.failed_extras: set[int] = set()
        # Not a closure over self (a reference cycle): a cycle lives until the collector runs, and with
        # the few allocations a cycle now makes it kept every action's arrays for many cycles (a NASA x3
        # replay held 2 GB where it had held 0.7).
        self._tasks_of = tasks_of
        self._leaves: dict[int, _Leaf] = {}
        self._waiting: set[int] = set()  # leaves with a job waiting
        self._walk = QueueTournament(session.queues.tree, session.queues.fair_share)
        # leaves whose best job changed since the walk last saw their offer: priced at the next walk,
        # so the offer is the request of the job that is best at that moment
        self._unpriced: set[int] = set()
        given = jobs if isinstance(jobs, np.ndarray) else np.fromiter(jobs, dtype=np.int64)
        if tasks_of is None and given.size > FEW:
            self._start(given)
        else:
            for j in given.tolist():
                self.push(j)

    def _start(self, jobs: IntArray) -> None:
        """The given jobs with tasks to place, by leaf in key order: ``tasks_to_allocate`` and
        ``job_order_key`` as vectors. A job has tasks when it has a Pending one and, while short of
        ``min_available``, at least as many Pending as it is short."""
        session = self.session
        snapshot = session.snapshot
        phase, task_job, n_jobs = snapshot.state.task_phase, snapshot.task_job, len(snapshot.jobs)
        pending = np.bincount(task_job[phase == PENDING], minlength=n_jobs)[jobs]
        active = np.bincount(task_job[(phase == BOUND) | (phase == PIPELINED)], minlength=n_jobs)[jobs]
        minimum = snapshot.job_min_available[jobs]
        missing = minimum - active
        keep = (pending > 0) & ((missing <= 0) | (pending >= missing))
        jobs, active, minimum = jobs[keep], active[keep], minimum[keep]
        if not jobs.size:
            return
        negative_priority = -snapshot.job_priority[jobs]
        rank = np.where(active < minimum, 0, np.where(active == minimum, 1, 2))  # ordering.elastic_rank
        leaf = session.queues.job_leaf[jobs]
        # job_order_key within a leaf: -priority, rank, age (the index: unique, so the name never decides)
        order = np.lexsort((jobs, rank, negative_priority, leaf))
        jobs, leaf = jobs[order], leaf[order]
        negative_priority, rank = negative_priority[order], rank[order]
        bounds = [0, *(np.flatnonzero(np.diff(leaf)) + 1).tolist(), int(jobs.size)]
        for start, end in itertools.pairwise(bounds):
            lf = int(leaf[start])
            self._leaves[lf] = _Leaf(jobs[start:end], negative_priority[start:end], rank[start:end])
            self._waiting.add(lf)
            self._unpriced.add(lf)

    def tasks_of(self, session: Session, j: int) -> list[int]:
        """Job j's tasks to place now: ``tasks_to_allocate`` less the failed extras, unless given."""
        if self._tasks_of is not None:
            return self._tasks_of(session, j)
        return tasks_to_allocate(session, j, self.failed_extras)

    def push(self, j: int) -> None:
        """(Re-)queue job j if it still has tasks to place."""
        session = self.session
        if not self.tasks_of(session, j):
            return
        leaf = int(session.queues.job_leaf[j])
        found = self._leaves.get(leaf)
        if found is None:
            found = self._leaves[leaf] = _Leaf()
        key = job_order_key(session.snapshot.jobs[j], active_count(session, j), j)
        heapq.heappush(found.heap, (key, j))
        self._waiting.add(leaf)
        self._unpriced.add(leaf)

    def _head(self, leaf: int) -> tuple[Key, int] | None:
        """The leaf's best waiting job, with its key (a job given at the start, keyed as it was then)."""
        found = self._leaves.get(leaf)
        if found is None:
            return None
        initial = None
        if found.cursor < len(found.initial):
            c = found.cursor
            j = int(found.initial[c])
            key = (int(found.negative_priority[c]), int(found.rank[c]), j, self.session.snapshot.jobs[j].name)
            initial = (key, j)
        if found.heap and (initial is None or found.heap[0] < initial):
            return found.heap[0]
        return initial

    def next_leaf(self) -> int | None:
        if len(self._waiting) <= 1:
            return next(iter(self._waiting), None)
        session = self.session
        for leaf in sorted(self._unpriced):
            head = self._head(leaf)
            self._walk.set_offer(leaf, session.request_of(self.tasks_of(session, head[1])) if head else None)
        self._unpriced.clear()
        return self._walk.winner(session.queues.usage)

    def pop(self) -> int | None:
        """The next job to try (removed: push it back if it should compete again)."""
        leaf = self.next_leaf()
        if leaf is None:
            return None
        self._unpriced.add(leaf)
        found = self._leaves[leaf]
        head = self._head(leaf)
        assert head is not None
        if found.heap and found.heap[0] is head:
            heapq.heappop(found.heap)
        else:
            found.cursor += 1
        if not found:
            self._waiting.discard(leaf)
        return head[1]

    def peek_same_leaf(self, leaf: int) -> int | None:
        head = self._head(leaf)
        return None if head is None else head[1]

    def peek_key(self, leaf: int) -> Key | None:
        head = self._head(leaf)
        return None if head is None else head[0]

    def remaining(self) -> list[int]:
        """The jobs still waiting (any order)."""
        left: list[int] = []
        for found in self._leaves.values():
            left += found.initial[found.cursor :].tolist()
            left += [j for _, j in found.heap]
        return left

    def only_leaf(self) -> bool:
        return len(self._waiting) <= 1
