"""The engine's cached per-class totals (refreshed only at the nodes the Statement logged) always equal
a from-scratch evaluation, whatever placements, evictions and undos happened in between."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.core.columns.snapshot import BOUND, NO_NODE, PENDING
from loadmaster.core.model import Cluster, Job, Node, SchedulerConfig, Task
from loadmaster.core.working.node_changes import NodeChanges
from loadmaster.placement.engine import INFEASIBLE, Choice, PlacementEngine
from loadmaster.session import Session
from tests.properties.strategies import clusters

OPS = st.lists(
    st.tuples(st.sampled_from(["place", "run", "evict", "rollback"]), st.integers(0, 63)), max_size=14
)


def _from_scratch(engine: PlacementEngine, t: int) -> np.ndarray:
    ctx = engine.context(t)
    feasible = engine.feasible(ctx)
    return np.where(feasible, engine.total(ctx, feasible), INFEASIBLE)


def _check_every_pending_class(session: Session) -> int:
    engine, checked = session.engine, 0
    for t in np.flatnonzero(session.snapshot.state.task_phase == PENDING).tolist():
        plan = engine.plan_of(t)
        if not plan.local:
            continue
        cached = engine._masked(plan, engine._scorers(plan))
        scratch = _from_scratch(engine, t)
        assert cached.tolist() == scratch.tolist()
        best = int(np.argmax(scratch))
        assert engine.choose(t).node == (best if scratch[best] != INFEASIBLE else NO_NODE)
        checked += plan.cacheable
    return checked


def _place(session: Session, tasks: list[int], with_runs: bool) -> None:
    statement = session.statement

    def apply(t: int, choice: Choice) -> bool:
        if choice.placed:
            (statement.allocate if choice.fits_idle else statement.pipeline)(t, choice.node)
        return choice.placed

    def apply_run(run: object, nodes: np.ndarray) -> None:
        statement.allocate_many(run, nodes)  # type: ignore[arg-type]

    session.engine.choose_many(tasks, apply, apply_run if with_runs else None)


def _run_op(session: Session, kind: str, pick: int, checkpoints: list[int]) -> None:
    snapshot, statement = session.snapshot, session.statement
    phase = snapshot.state.task_phase
    if kind == "rollback":
        if checkpoints:
            statement.rollback(checkpoints[pick % len(checkpoints)])
            del checkpoints[pick % len(checkpoints) :]
        return
    checkpoints.append(statement.checkpoint())
    if kind == "evict":
        running = [t for t in snapshot.input_running_tasks.tolist() if phase[t] == BOUND]
        if running:
            statement.evict(running[pick % len(running)], "preempt", "test")
        return
    pending = np.flatnonzero(phase == PENDING).tolist()
    if not pending:
        return
    t = pending[pick % len(pending)]
    same = [u for u in pending if engine_class(session, u) == engine_class(session, t)]
    _place(session, same if kind == "run" else [t], with_runs=kind == "run")


def engine_class(session: Session, t: int) -> object:
    return session.engine.class_of(t)


@settings(max_examples=150)
@given(
    cluster=clusters(max_nodes=6, max_jobs=6),
    strategy=st.sampled_from(["binpack", "spread", "balanced"]),
    profile=st.sampled_from(["default", "gpu_pack", "least_instances", "first_fit"]),
    ops=OPS,
)
def test_cached_totals_equal_a_from_scratch_evaluation_after_any_operations(
    cluster: Cluster, strategy: str, profile: str, ops: list[tuple[str, int]]
) -> None:
    config = SchedulerConfig(strategy=strategy, profile=profile)  # type: ignore[arg-type]
    session = Session.open(Cluster(cluster.nodes, cluster.jobs, cluster.queues, config))
    _check_every_pending_class(session)  # fills the cache before anything changes
    checkpoints: list[int] = []
    for kind, pick in ops:
        _run_op(session, kind, pick, checkpoints)
        _check_every_pending_class(session)


def test_node_changes_give_the_distinct_nodes_changed_since_a_mark() -> None:
    log = NodeChanges()
    mark = log.mark()
    log.add(3)
    log.add(np.array([5, 3, 1]))
    assert log.since(mark) is not None
    assert log.since(mark).tolist() == [1, 3, 5]  # type: ignore[union-attr]
    assert log.since(log.mark()).tolist() == []  # type: ignore[union-attr]


def test_a_full_node_changes_log_is_cleared_and_older_marks_ask_for_everything(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(NodeChanges, "LIMIT", 2)
    log = NodeChanges()
    old = log.mark()
    log.add(1)
    log.add(2)
    log.add(4)  # the third entry clears the log first
    assert log.since(old) is None
    assert log.since((log.epoch, 0)).tolist() == [4]  # type: ignore[union-attr]


def test_the_cache_stays_exact_when_its_log_is_cleared_between_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(NodeChanges, "LIMIT", 1)
    alloc = {"cpu": 4000, "memory": 8 * 2**30}
    nodes = tuple(Node(f"node-{i}", alloc, alloc) for i in range(4))
    tasks = tuple(Task(f"t-{k}", "job", {"cpu": 1000, "memory": 2**30}) for k in range(9))
    session = Session.open(Cluster(nodes, (Job("job", tasks),)))
    assert _check_every_pending_class(session) > 0
    for t in range(3):
        _place(session, [t], with_runs=False)
        assert _check_every_pending_class(session) > 0
