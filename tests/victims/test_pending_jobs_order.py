"""PendingJobs (incremental queue walk, offers repriced only for the leaves whose best job changed) pops
jobs in the order a from-scratch walk over every leaf's best job gives, while placements change usage."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.actions.gang import active_count, jobs_with_pending_tasks, tasks_to_allocate
from loadmaster.actions.job_queue import FEW, PendingJobs
from loadmaster.actions.placing import place_all
from loadmaster.core.model import Cluster
from loadmaster.queues.ordering import job_order_key, next_leaf
from loadmaster.session import Session
from tests.properties.strategies import clusters

SETTINGS = settings(max_examples=150)


def expected_next(session: Session, waiting: set[int]) -> int | None:
    """The walk from scratch: every leaf offers its best job's request; that leaf's best job goes."""
    queues, jobs = session.queues, session.snapshot.jobs
    best: dict[int, int] = {}
    for j in sorted(waiting, key=lambda j: job_order_key(jobs[j], active_count(session, j), j)):
        best.setdefault(int(queues.job_leaf[j]), j)
    if not best:
        return None
    if len(best) == 1:
        return next(iter(best.values()))
    offers = {leaf: session.request_of(tasks_to_allocate(session, j)) for leaf, j in best.items()}
    leaf = next_leaf(queues.tree, queues.usage, queues.fair_share, offers)
    return None if leaf is None else best[leaf]


@SETTINGS
@given(clusters(with_queues=True, max_jobs=10), st.data(), st.sampled_from([0, FEW]))
def test_jobs_pop_in_the_order_of_the_walk_from_scratch(
    cluster: Cluster, data: st.DataObject, few: int
) -> None:
    """``few``: jobs at most pushed one by one; past it they are ordered as vectors (0: always)."""
    with patch("loadmaster.actions.job_queue.FEW", few):
        check_the_order(cluster, data)


def check_the_order(cluster: Cluster, data: st.DataObject) -> None:
    session = Session.open(cluster)
    pending = PendingJobs(session, jobs_with_pending_tasks(session))
    waiting = {j for j in jobs_with_pending_tasks(session) if tasks_to_allocate(session, j)}
    for _ in range(30):  # a failed job pushed back could compete forever: a bounded run suffices
        expected = expected_next(session, waiting)
        j = pending.pop()
        assert j == expected
        if j is None:
            return
        waiting.discard(j)
        if data.draw(st.booleans(), label="place and push back"):
            if not place_all(session, tasks_to_allocate(session, j), "test"):
                session.commit()  # usage changes: the next walks must see it
            pending.push(j)
            if tasks_to_allocate(session, j):
                waiting.add(j)
