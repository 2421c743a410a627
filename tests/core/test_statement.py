"""The Statement's undo is exact: any sequence of operations rolled back restores every array bit for bit."""

from __future__ import annotations

import copy

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from loadmaster.core.columns.snapshot import BOUND, PENDING, RELEASING, ClusterSnapshot, WorkingState
from loadmaster.core.working.statement import Statement
from loadmaster.placement.engine import PlacementEngine
from loadmaster.placement.profile import profile_for
from tests.properties.strategies import clusters


def _arrays(state: WorkingState) -> dict[str, np.ndarray]:
    out = {
        "node_used": state.node_used, "node_used_nz": state.node_used_nz,
        "node_releasing": state.node_releasing, "node_free": state.node_free, "node_idle": state.node_idle,
        "node_tasks": state.node_tasks, "dev_used": state.devices.used,
        "dev_releasing": state.devices.releasing,
        "pool_used": state.pool_used, "task_phase": state.task_phase, "task_node": state.task_node,
        "task_release_node": state.task_release_node,
    }  # fmt: skip
    for port, arr in state.ports_active.items():
        out[f"port_active_{port}"] = arr
    for port, arr in state.ports_releasing.items():
        out[f"port_releasing_{port}"] = arr
    return {k: v.copy() for k, v in out.items()}


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    keys = set(a) | set(b)
    return all(
        np.array_equal(a.get(k, np.zeros_like(b.get(k))), b.get(k, np.zeros_like(a.get(k)))) for k in keys
    )


class StatementMachine(RuleBasedStateMachine):
    @initialize(cluster=clusters(max_nodes=4, max_jobs=5))
    def open(self, cluster) -> None:  # type: ignore[no-untyped-def]
        self.snapshot = ClusterSnapshot(cluster)
        self.engine = PlacementEngine(self.snapshot, profile_for(cluster.config))
        self.statement = Statement(self.snapshot)
        self.saved: list[tuple[int, dict[str, np.ndarray], dict]] = []

    @rule()
    def checkpoint(self) -> None:
        cp = self.statement.checkpoint()
        self.saved.append((cp, _arrays(self.snapshot.state), copy.copy(self.snapshot.state.records)))

    @rule(data=st.data())
    def place_a_pending_task(self, data: st.DataObject) -> None:
        pending = [t for t in range(self.snapshot.n_tasks) if self.snapshot.state.task_phase[t] == PENDING]
        if not pending:
            return
        t = data.draw(st.sampled_from(pending))
        choice = self.engine.choose(t)
        if choice.placed:
            if choice.fits_idle and data.draw(st.booleans()):
                self.statement.allocate(t, choice.node)
            else:
                self.statement.pipeline(t, choice.node)

    @rule(data=st.data())
    def evict_a_running_task(self, data: st.DataObject) -> None:
        running = [
            t
            for t in self.snapshot.input_running_tasks.tolist()
            if self.snapshot.state.task_phase[t] == BOUND
        ]
        if running:
            self.statement.evict(data.draw(st.sampled_from(sorted(running))), "preempt", "test")

    @rule(data=st.data())
    def move_an_evicted_task(self, data: st.DataObject) -> None:
        evicted = [
            t
            for t in self.snapshot.input_running_tasks.tolist()
            if self.snapshot.state.task_phase[t] == RELEASING
        ]
        if evicted:
            t = data.draw(st.sampled_from(sorted(evicted)))
            choice = self.engine.choose(t)
            if choice.placed:
                self.statement.pipeline(t, choice.node)

    @precondition(lambda self: bool(self.saved))
    @rule(data=st.data())
    def rollback_to_a_checkpoint(self, data: st.DataObject) -> None:
        index = data.draw(st.integers(0, len(self.saved) - 1))
        cp, arrays, records = self.saved[index]
        del self.saved[index:]
        self.statement.rollback(cp)
        assert _same(_arrays(self.snapshot.state), arrays)
        assert self.snapshot.state.records == records

    @invariant()
    def usage_never_negative_and_free_arrays_in_step(self) -> None:
        if hasattr(self, "snapshot"):
            state, alloc = self.snapshot.state, self.snapshot.node_alloc
            assert (state.node_used >= 0).all()
            assert (state.node_releasing >= 0).all()
            assert np.array_equal(state.node_free, alloc - state.node_used)
            assert np.array_equal(state.node_idle, alloc - state.node_used - state.node_releasing)


StatementMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=25)
test_statement_undo_is_exact = StatementMachine.TestCase
