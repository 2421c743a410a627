"""A simulated service under random applies, rollbacks, crashes, health flips and step timeouts.

The model plays the replacement primitive's part (a replacement swaps in once Running and healthy; one
past its deadline is removed) and the agents' (replacements come up, replicas crash and recover); the
controller under test is ``plan_rollout``. Safety: the rollout never has more than one replacement in
flight, never starts a step while a replica it already replaced is not Running (during a rollout), and
an old replica leaves only for a Running and healthy replacement. Liveness: once the faults stop, every
replica runs the target revision (the applied one, or after an abort the last good one, with the plan still
aborted): no service is left half rolled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from loadmaster.controllers.deployments.rollout import (
    Replacement,
    RollingService,
    Slot,
    SlotTuple,
    plan_rollout,
    target_hash,
)
from loadmaster.controllers.deployments.rollout_plan import ABORTED, COMPLETED, IN_PROGRESS, RolloutPlan

T0 = datetime(2026, 1, 1, tzinfo=UTC)
IMAGES = ("shop:1", "shop:2", "shop:3")
STEP_TIMEOUT_S = 60.0


@dataclass
class SimSlot:
    index: int
    spec_hash: str
    running: bool = True
    replacement: Replacement | None = None
    deadline: datetime | None = None


@dataclass
class Service:
    slots: list[SimSlot]
    applied: int = 1
    previous: int | None = None
    revisions: dict[int, dict[str, str]] = field(default_factory=lambda: {1: {"api": IMAGES[0]}})
    plan: RolloutPlan | None = None
    now: datetime = T0
    healthy_replacements: bool = True


class RolloutMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.s = Service([SimSlot(i, IMAGES[0]) for i in range(4)])

    # -- the controller ----------------------------------------------------------------------------------

    def _view(self) -> RollingService:
        slots = tuple(
            Slot(
                f"web-api-{x.index}",
                x.index,
                x.spec_hash,
                "Running" if x.running else "Pending",
                x.running,
                x.replacement,
            )
            for x in self.s.slots
        )
        return RollingService(
            "api", self.s.revisions[self.s.applied]["api"], SlotTuple(slots), STEP_TIMEOUT_S
        )

    @rule()
    def reconcile(self) -> None:
        s = self.s
        service = self._view()
        decision = plan_rollout(s.applied, s.previous, s.revisions, s.plan, (service,), s.now)
        plan = decision.plan or s.plan
        target = target_hash(service, plan, s.revisions)
        by_name = {f"web-api-{x.index}": x for x in s.slots}
        for abort in decision.aborts:
            slot = by_name[abort.replica]
            assert slot.replacement is not None
            slot.replacement, slot.deadline = None, None
        assert len(decision.starts) <= 1
        for start in decision.starts:
            assert start.spec_hash == target
            # A step starts only when nothing else is in flight and, during a rollout, every replica
            # already replaced runs.
            assert all(x.replacement is None for x in s.slots)
            if plan is not None and plan.state == IN_PROGRESS:
                assert all(x.running for x in s.slots if x.spec_hash == target)
            slot = by_name[start.replica]
            slot.replacement = Replacement(start.spec_hash, "Scheduled", False)
            slot.deadline = start.deadline
        s.plan = plan

    # -- the world ---------------------------------------------------------------------------------------

    @rule(image=st.sampled_from(IMAGES))
    def apply(self, image: str) -> None:
        s = self.s
        if s.revisions[s.applied]["api"] == image:
            return  # an apply that changes nothing stores no revision
        s.previous, s.applied = s.applied, s.applied + 1
        s.revisions[s.applied] = {"api": image}

    @rule()
    def rollback(self) -> None:
        s = self.s
        if s.previous is None or s.revisions[s.previous] == s.revisions[s.applied]:
            return
        spec = s.revisions[s.previous]
        s.previous, s.applied = s.applied, s.applied + 1
        s.revisions[s.applied] = dict(spec)

    @rule(index=st.integers(0, 3), running=st.booleans())
    def crash_or_recover(self, index: int, running: bool) -> None:
        self.s.slots[index].running = running

    @rule(healthy=st.booleans())
    def health_flip(self, healthy: bool) -> None:
        self.s.healthy_replacements = healthy

    @rule(seconds=st.sampled_from([1.0, 5.0, 30.0, 61.0]))
    def time_passes(self, seconds: float) -> None:
        """The agents start replacements; the primitive swaps the healthy ones and drops the late ones."""
        s = self.s
        s.now += timedelta(seconds=seconds)
        for slot in s.slots:
            if slot.replacement is None:
                continue
            assert slot.deadline is not None
            if slot.replacement.phase == "Running" and slot.replacement.healthy:
                slot.spec_hash, slot.running = slot.replacement.spec_hash, True
                slot.replacement, slot.deadline = None, None
            elif s.now >= slot.deadline:
                slot.replacement, slot.deadline = None, None
            else:
                slot.replacement = Replacement(slot.replacement.spec_hash, "Running", s.healthy_replacements)

    # -- properties --------------------------------------------------------------------------------------

    @invariant()
    def at_most_one_replacement_in_flight(self) -> None:
        assert sum(x.replacement is not None for x in self.s.slots) <= 1

    @precondition(lambda self: self.s.plan is not None)
    @rule()
    def faults_stop_and_the_service_settles(self) -> None:
        s = self.s
        s.healthy_replacements = True
        for slot in s.slots:
            slot.running = True
        before = (s.plan.state, s.plan.revision) if s.plan else None
        for _ in range(40):
            self.reconcile()
            self.time_passes(1.0)
        plan = s.plan
        assert plan is not None
        target = target_hash(self._view(), plan, s.revisions)
        assert all(x.spec_hash == target for x in s.slots), "a half-rolled service"
        assert all(x.replacement is None for x in s.slots)
        if plan.revision == s.applied:
            assert plan.state in (COMPLETED, ABORTED)
            if before == (ABORTED, s.applied):
                assert plan.state == ABORTED  # never retried by itself
            if plan.state == ABORTED:
                assert target == s.revisions[plan.from_revision]["api"] if plan.from_revision else True
        assert plan.state != IN_PROGRESS or plan.revision != s.applied


RolloutMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=30)
TestRolloutStateMachine = RolloutMachine.TestCase
