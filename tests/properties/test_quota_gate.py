"""allocate's quota check skips the sums when nothing on the job's path is governed (actions/quota.py):
it answers as both capacity checks run in full, for every job of random clusters with queues."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import event, given, settings
from hypothesis import strategies as st

from loadmaster.actions.gang import tasks_to_allocate
from loadmaster.actions.quota import quota_refusal
from loadmaster.core.model import Cluster
from loadmaster.queues.capacity import fits_limits, fits_non_preemptible_quota
from loadmaster.session import Session
from tests.properties.strategies import clusters


def checked_in_full(session: Session, j: int, tasks: list[int]) -> str | None:
    queues = session.queues
    leaf, request = int(queues.job_leaf[j]), session.request_of(tasks)
    refusal = fits_limits(queues.usage, queues.tree, leaf, request)
    if refusal is None and not session.snapshot.jobs[j].preemptible:
        refusal = fits_non_preemptible_quota(queues.usage, queues.tree, leaf, request)
    return refusal


@st.composite
def with_non_preemptible_jobs(draw: st.DrawFn) -> Cluster:
    cluster = draw(clusters(max_nodes=4, max_jobs=8, with_queues=True))
    jobs = tuple(replace(job, preemptible=draw(st.booleans())) for job in cluster.jobs)
    return replace(cluster, jobs=jobs)


@settings(max_examples=300)
@given(with_non_preemptible_jobs())
def test_the_quota_check_refuses_exactly_what_the_capacity_checks_refuse(cluster: Cluster) -> None:
    session = Session.open(cluster)
    for j in range(len(session.snapshot.jobs)):
        tasks = tasks_to_allocate(session, j)
        if tasks:
            refusal = quota_refusal(session, j, tasks)
            event("refused" if refusal else "admitted")
            assert refusal == checked_in_full(session, j, tasks)
