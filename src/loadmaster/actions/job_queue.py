"""The order in which an action considers pending jobs: queue by queue, then job by job.

At each step the queue tree is walked from the top (not over-utilised first, starved first, priority,
dominant share with the job, ...; ``queues.ordering``) to the leaf whose best job goes next; within a
leaf, jobs go by ``job_order_key`` (priority, elastic rank, age). A job that still has tasks to place
after its turn is pushed back with its new key, so elastic extras interleave with other queues, as in
KAI. Shares change as jobs are placed, so the walk is redone for every job: incrementally
(``queues.tournament``), which sees every usage change itself and is told here whenever a leaf's best
job, and so its offer, changes.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable

from loadmaster.actions.gang import active_count, tasks_to_allocate
from loadmaster.queues.ordering import job_order_key
from loadmaster.queues.tournament import QueueTournament
from loadmaster.session import Session

TasksOf = Callable[[Session, int], list[int]]


class PendingJobs:
    def __init__(self, session: Session, jobs: Iterable[int], tasks_of: TasksOf | None = None) -> None:
        self.session = session
        # elastic extras that found no node: skipped, so the job's next task gets its turn
        self.failed_extras: set[int] = set()
        self.tasks_of: TasksOf = tasks_of or (lambda s, j: tasks_to_allocate(s, j, self.failed_extras))
        self._heaps: dict[int, list[tuple[tuple[int, int, int, str], int]]] = {}
        self._waiting: set[int] = set()  # leaves whose heap is not empty
        self._walk = QueueTournament(session.queues.tree, session.queues.fair_share)
        # leaves whose best job changed since the walk last saw their offer: priced at the next walk,
        # so the offer is the request of the job that is best at that moment
        self._unpriced: set[int] = set()
        for j in jobs:
            self.push(j)

    def push(self, j: int) -> None:
        """(Re-)queue job j if it still has tasks to place."""
        session = self.session
        if not self.tasks_of(session, j):
            return
        leaf = int(session.queues.job_leaf[j])
        key = job_order_key(session.snapshot.jobs[j], active_count(session, j), j)
        heapq.heappush(self._heaps.setdefault(leaf, []), (key, j))
        self._waiting.add(leaf)
        self._unpriced.add(leaf)

    def next_leaf(self) -> int | None:
        if len(self._waiting) <= 1:
            return next(iter(self._waiting), None)
        session = self.session
        for leaf in sorted(self._unpriced):
            heap = self._heaps[leaf]
            self._walk.set_offer(
                leaf, session.request_of(self.tasks_of(session, heap[0][1])) if heap else None
            )
        self._unpriced.clear()
        return self._walk.winner(session.queues.usage)

    def pop(self) -> int | None:
        """The next job to try (removed: push it back if it should compete again)."""
        leaf = self.next_leaf()
        if leaf is None:
            return None
        self._unpriced.add(leaf)
        heap = self._heaps[leaf]
        j = heapq.heappop(heap)[1]
        if not heap:
            self._waiting.discard(leaf)
        return j

    def peek_same_leaf(self, leaf: int) -> int | None:
        heap = self._heaps.get(leaf)
        return heap[0][1] if heap else None

    def peek_key(self, leaf: int) -> tuple[int, int, int, str] | None:
        heap = self._heaps.get(leaf)
        return heap[0][0] if heap else None

    def only_leaf(self) -> bool:
        return len(self._waiting) <= 1
