"""A task's class worked out per run of equal placement fields (placement/task_runs.py) is the one its
own key gives: the same numbers, handed out in the same order as key by key, whatever order the tasks
are asked about in and when the same Job objects come back in a later snapshot (the memo)."""

from __future__ import annotations

import random
from collections.abc import Hashable
from itertools import groupby

from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.core.model import PROFILES, Cluster, Job, Node, SchedulerConfig, Task, Toleration
from loadmaster.session import Session

# Each variant differs from the first in one field the class key reads.
VARIANTS: tuple[dict[str, object], ...] = (
    {},
    {"request": {"cpu": 2000}},
    {"tolerations": (Toleration("dedicated", "Exists"),)},
    {"node_selector": {"zone": "a"}},
    {"ports": (8080,)},
    {"previous_node": "node-0"},
    {"avoid_nodes": ("node-1",)},
    {"delayed_shutdown": True},
    {"labels": {"app": "x"}},  # read only with a spread constraint: a run split, not a class
)


@st.composite
def jobs_of_variants(draw: st.DrawFn) -> Cluster:
    nodes = tuple(Node(f"node-{i}", {"cpu": 8000}, {"cpu": 8000}, labels={"zone": "a"}) for i in range(2))
    jobs = []
    for j in range(draw(st.integers(1, 5))):
        size = draw(st.integers(1, 6))
        variants = draw(st.lists(st.sampled_from(range(len(VARIANTS))), min_size=size, max_size=size))
        tasks = []
        for k, v in enumerate(variants):
            fields: dict[str, object] = {"request": {"cpu": 1000}, **VARIANTS[v]}
            tasks.append(Task(f"job-{j}-{k}", f"job-{j}", **fields))  # type: ignore[arg-type]
        jobs.append(Job(f"job-{j}", tuple(tasks)))
    profile = draw(st.sampled_from(PROFILES))
    return Cluster(nodes, tuple(jobs), (), SchedulerConfig(profile=profile))


def classes_key_by_key(session: Session, order: list[int]) -> dict[int, int]:
    """The reference: every task's own key, numbered in the order the tasks are asked about."""
    ids: dict[Hashable, int] = {}
    return {t: ids.setdefault(session.engine._class_key(t), len(ids)) for t in order}


@settings(max_examples=200)
@given(jobs_of_variants(), st.randoms(use_true_random=False))
def test_a_task_gets_the_class_its_own_key_gives_in_every_snapshot_and_order(
    cluster: Cluster, rng: random.Random
) -> None:
    for _ in range(2):  # the second snapshot finds the very same Job objects in the memo
        session = Session.open(cluster)
        order = list(range(session.snapshot.n_tasks))
        rng.shuffle(order)
        assert {t: session.engine.class_of(t) for t in order} == classes_key_by_key(session, order)
        for j, members in enumerate(session.snapshot.job_tasks):
            keys = {session.engine._class_key(t) for t in members}
            if session.engine.one_class_job(j):
                assert len(keys) == 1


@settings(max_examples=200)
@given(jobs_of_variants(), st.randoms(use_true_random=False))
def test_a_job_s_tasks_are_grouped_by_class_as_groupby_over_each_task_s_class(
    cluster: Cluster, rng: random.Random
) -> None:
    session = Session.open(cluster)
    engine = session.engine
    for j, members in enumerate(session.snapshot.job_tasks):
        some = sorted(rng.sample(list(members), rng.randint(0, len(members))))
        expected = [list(group) for _, group in groupby(some, key=engine._class_key)]
        assert engine.class_groups(j, some) == expected
