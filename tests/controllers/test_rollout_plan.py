"""The RolloutPlan state machine (controllers/deployments/rollout.py) on plain slots: start, step, abort,
complete."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from loadmaster.controllers.deployments.rollout import (
    Replacement,
    RollingService,
    Slot,
    SlotTuple,
    plan_rollout,
)
from loadmaster.controllers.deployments.rollout_plan import (
    ABORTED,
    COMPLETED,
    IN_PROGRESS,
    STEP_TIMEOUT,
    RolloutPlan,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
OLD, NEW = "old-hash", "new-hash"
HASHES = {1: {"api": OLD}, 2: {"api": NEW}}


def _service(*slots: Slot, applied: str = NEW) -> RollingService:
    return RollingService("api", applied, SlotTuple(tuple(slots)))


def _slot(
    index: int, spec_hash: str = OLD, phase: str = "Running", replacement: Replacement | None = None
) -> Slot:
    return Slot(f"web-api-{index}", index, spec_hash, phase, True, replacement)


def test_an_image_change_of_a_three_replica_service_starts_a_plan_and_replaces_index_0_first() -> None:
    decision = plan_rollout(2, 1, HASHES, None, (_service(_slot(0), _slot(1), _slot(2)),), T0)
    assert decision.plan is not None
    assert (decision.plan.state, decision.plan.total_steps, decision.plan.current_step) == (IN_PROGRESS, 3, 1)
    assert decision.plan.from_revision == 1
    assert [s.replica for s in decision.starts] == ["web-api-0"]
    assert decision.starts[0].deadline == T0 + timedelta(seconds=60)
    assert decision.events == ("rollout_started", "rollout_step")


def test_a_step_in_flight_is_waited_for_and_nothing_else_starts() -> None:
    plan = plan_rollout(2, 1, HASHES, None, (_service(_slot(0), _slot(1), _slot(2)),), T0).plan
    flight = Replacement(NEW, "Scheduled", False)
    service = _service(_slot(0, replacement=flight), _slot(1), _slot(2))
    decision = plan_rollout(2, 1, HASHES, plan, (service,), T0 + timedelta(seconds=10))
    assert decision.plan is None and not decision.starts and not decision.aborts


def test_the_next_step_takes_the_next_index_once_the_swap_is_done() -> None:
    plan = plan_rollout(2, 1, HASHES, None, (_service(_slot(0), _slot(1), _slot(2)),), T0).plan
    service = _service(_slot(0, NEW), _slot(1), _slot(2))
    decision = plan_rollout(2, 1, HASHES, plan, (service,), T0 + timedelta(seconds=5))
    assert [s.replica for s in decision.starts] == ["web-api-1"]
    assert decision.plan is not None and decision.plan.current_step == 2


def test_a_replaced_replica_not_running_holds_the_next_step() -> None:
    plan = plan_rollout(2, 1, HASHES, None, (_service(_slot(0), _slot(1), _slot(2)),), T0).plan
    service = _service(_slot(0, NEW, phase="Pending"), _slot(1), _slot(2))
    decision = plan_rollout(2, 1, HASHES, plan, (service,), T0 + timedelta(seconds=5))
    assert not decision.starts and decision.plan is None


def test_a_step_past_its_timeout_aborts_and_removes_the_replacement() -> None:
    plan = plan_rollout(2, 1, HASHES, None, (_service(_slot(0), _slot(1), _slot(2)),), T0).plan
    service = _service(_slot(0, replacement=Replacement(NEW, "Scheduled", False)), _slot(1), _slot(2))
    decision = plan_rollout(2, 1, HASHES, plan, (service,), T0 + timedelta(seconds=60))
    assert decision.plan is not None
    assert (decision.plan.state, decision.plan.failure_reason) == (ABORTED, STEP_TIMEOUT)
    assert [(a.replica, a.reason) for a in decision.aborts] == [("web-api-0", STEP_TIMEOUT)]
    assert decision.events == ("rollout_aborted",)


def test_after_an_abort_replaced_replicas_return_to_the_last_good_revision_and_the_plan_stays_aborted() -> (
    None
):
    plan = RolloutPlan(2, 1, ("api",), 3, 2, ABORTED, STEP_TIMEOUT, T0, T0)
    service = _service(_slot(0, NEW), _slot(1), _slot(2))
    decision = plan_rollout(2, 1, HASHES, plan, (service,), T0 + timedelta(seconds=90))
    assert [(s.replica, s.spec_hash) for s in decision.starts] == [("web-api-0", OLD)]
    assert decision.plan is None  # still aborted, not retried
    settled = _service(_slot(0), _slot(1), _slot(2))
    assert plan_rollout(2, 1, HASHES, plan, (settled,), T0 + timedelta(seconds=200)).starts == ()


def test_the_last_swap_completes_the_plan() -> None:
    plan = RolloutPlan(
        2, 1, ("api",), 2, 2, IN_PROGRESS, None, T0, T0, "web-api-1", T0 + timedelta(seconds=60)
    )
    decision = plan_rollout(
        2, 1, HASHES, plan, (_service(_slot(0, NEW), _slot(1, NEW)),), T0 + timedelta(seconds=70)
    )
    assert decision.plan is not None and decision.plan.state == COMPLETED
    assert decision.events == ("rollout_completed",)


def test_a_new_apply_during_a_rollout_supersedes_it_and_aborts_its_step() -> None:
    hashes = {**HASHES, 3: {"api": "third"}}
    plan = plan_rollout(2, 1, HASHES, None, (_service(_slot(0), _slot(1), _slot(2)),), T0).plan
    assert plan is not None
    service = replace(
        _service(_slot(0, replacement=Replacement(NEW, "Scheduled", False)), _slot(1), _slot(2)),
        applied_hash="third",
    )
    decision = plan_rollout(3, 2, hashes, plan, (service,), T0 + timedelta(seconds=5))
    assert decision.plan is not None and (decision.plan.revision, decision.plan.from_revision) == (3, 1)
    assert [(a.replica, a.reason) for a in decision.aborts] == [("web-api-0", "superseded")]
    assert decision.events[0] == "rollout_started"


def test_a_scale_starts_no_plan() -> None:
    service = _service(_slot(0, NEW), _slot(1, NEW), _slot(2, NEW))
    decision = plan_rollout(3, 2, {**HASHES, 3: {"api": NEW}}, None, (service,), T0)
    assert decision.plan is None and not decision.starts
