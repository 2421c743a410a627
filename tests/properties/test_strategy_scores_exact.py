"""The vectorized strategy scores equal their docstring formulas computed in exact Python integers, for
whole-cluster passes, single columns and the fill path's ``score_copies``."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.core.model import Cluster, Job, Node, Task, TaskStatus
from loadmaster.placement.context import TaskContext
from loadmaster.placement.plugins.scorers.strategy_scores import binpack_score, spread_score

GI = 2**30


@st.composite
def loaded_clusters(draw: st.DrawFn) -> Cluster:
    nodes, jobs = [], []
    for i in range(draw(st.integers(1, 6))):
        alloc = {"cpu": draw(st.integers(0, 64)) * 250, "memory": draw(st.integers(0, 2**40))}
        nodes.append(Node(f"node-{i}", alloc, alloc))
        used = {"cpu": draw(st.integers(0, 20)) * 250, "memory": draw(st.integers(0, 2**39))}
        jobs.append(Job(f"run-{i}", (Task(f"run-{i}", f"run-{i}", used, TaskStatus.RUNNING, f"node-{i}"),)))
    request = {"cpu": draw(st.integers(1, 16)) * 125, "memory": draw(st.integers(1, 2**34))}
    jobs.append(Job("new", (Task("new", "new", request),)))
    return Cluster(tuple(nodes), tuple(jobs))


def _reference(snapshot: ClusterSnapshot, t: int, n: int, copies: int, spread: bool) -> int:
    scores = []
    for r in (0, 1):  # cpu, memory
        alloc = int(snapshot.node_alloc[r, n])
        if alloc <= 0:
            continue
        req = int(snapshot.state.node_used_nz[r, n]) + (copies + 1) * int(snapshot.task_request_nz[r, t])
        if spread:
            scores.append(0 if req > alloc else (alloc - req) * 100 // alloc)
        else:
            scores.append(min(req, alloc) * 100 // alloc)
    return sum(scores) // len(scores) if scores else 0


@settings(max_examples=200)
@given(cluster=loaded_clusters(), copies=st.integers(0, 5))
def test_binpack_and_spread_equal_their_integer_formulas(cluster: Cluster, copies: int) -> None:
    snapshot = ClusterSnapshot(cluster)
    t = snapshot.n_tasks - 1
    ctx = TaskContext.of(snapshot, t)
    every = np.arange(snapshot.n_nodes, dtype=np.int64)
    for score, spread in ((binpack_score, False), (spread_score, True)):
        expected = [_reference(snapshot, t, n, 0, spread) for n in range(snapshot.n_nodes)]
        assert score(ctx, slice(None)).tolist() == expected
        assert score(ctx, every[::-1]).tolist() == expected[::-1]
        with_copies = [_reference(snapshot, t, n, copies, spread) for n in range(snapshot.n_nodes)]
        assert score(ctx, every, np.full(every.size, copies)).tolist() == with_copies
