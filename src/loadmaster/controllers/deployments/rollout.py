"""Rolling updates: a deployment's RolloutPlan and the step it takes next (issue 15; pure).

A change of a service's spec hash (image, env, healthcheck, ...) while it has more than one replica is
rolled, one replica at a time, by the replacement primitive (make-before-break, ``replacement.py``):

* **Start.** The deployment's ``applied_revision`` differs from the plan's ``revision`` (or there is no
  plan) and some multi-replica service has a replica whose spec hash is not the applied one: a new plan
  ``in_progress`` over those services, ``total_steps`` = their replicas. An apply that changes nothing a
  replica runs (a scale) starts nothing. A new apply during a rollout supersedes it: the in-flight
  replacement is aborted and a new plan starts from where the replicas are, its ``from_revision`` the
  old plan's (the last revision every replica ran). After an abort, a new revision that rolls nothing
  (a rollback to what the replicas run) is a plan ``completed`` in 0 steps.
* **Step.** Step k replaces the replica with the k-th lowest index (services in the deployment's order):
  ``StartStep`` with the target hash and a deadline ``now + step_timeout``. The old replica keeps
  serving until its replacement is Running and healthy (the primitive's rule). A step starts only when
  no replacement is in flight and, during a rollout, every replica already at the new hash is Running
  (a new version that does not stay up stops the roll, and past the step's deadline aborts it; it never
  takes a second replica down), so at most one replica is not Running because of the rollout.
* **Abort.** A step still not done at its deadline aborts the rollout: ``AbortStep`` (the replacement is
  removed, the old replica keeps running), ``state: aborted``, ``failure_reason: step_timeout``. The
  target becomes the last good revision's hash, so the replicas already replaced are replaced back,
  one at a time by the same steps; the plan stays ``aborted`` and is not retried until the next
  changing apply or rollback (a new ``applied_revision``).
* **Complete.** Every replica at the target hash with no replacement in flight: ``state: completed``.

The same steps replace any replica whose hash differs from its service's target (drift), with or
without a plan. The rules ask a service's slots questions (``SlotSource``: the lowest slot of another
hash, whether a slot of a hash is not Running, the slots in flight) that the controller loop's index
answers without walking the service (``service_slots.py``), so a step's pass costs what changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Protocol

from loadmaster.controllers.deployments.rollout_plan import (
    ABORTED,
    COMPLETED,
    DEFAULT_STEP_TIMEOUT_S,
    IN_PROGRESS,
    STEP_TIMEOUT,
    RolloutPlan,
)
from loadmaster.controllers.views import RUNNING


@dataclass(frozen=True, slots=True)
class Replacement:
    """A replica's replacement in flight (``<name>.next``)."""

    spec_hash: str
    phase: str
    healthy: bool


@dataclass(frozen=True, slots=True)
class Slot:
    """One index of a service: its replica (the old incarnation until a swap) and its replacement."""

    name: str
    index: int
    spec_hash: str
    phase: str
    healthy: bool
    replacement: Replacement | None = None

    @property
    def is_running(self) -> bool:
        return self.phase == RUNNING


class SlotSource(Protocol):
    """What the rules ask of a service's slots; each answer without walking them (``service_slots.py``
    keeps them indexed for the controller loop; ``SlotTuple`` is the plain version)."""

    def __len__(self) -> int: ...

    def lowest_stale(self, target: str) -> Slot | None:
        """The lowest-index slot whose replica's hash is not ``target``."""
        ...

    def any_not_running(self, spec_hash: str) -> bool: ...

    def busy(self) -> Sequence[Slot]:
        """The slots with a replacement in flight."""
        ...

    def find(self, name: str) -> Slot | None: ...

    def position(self, index: int) -> int:
        """1 + how many slots have a lower index."""
        ...


@dataclass(frozen=True, slots=True)
class SlotTuple:
    """Slots as a tuple, lowest index first: every answer walks them (tests, small services)."""

    slots: tuple[Slot, ...]

    def __len__(self) -> int:
        return len(self.slots)

    def lowest_stale(self, target: str) -> Slot | None:
        return next((slot for slot in self.slots if slot.spec_hash != target), None)

    def any_not_running(self, spec_hash: str) -> bool:
        return any(not slot.is_running for slot in self.slots if slot.spec_hash == spec_hash)

    def busy(self) -> Sequence[Slot]:
        return [slot for slot in self.slots if slot.replacement is not None]

    def find(self, name: str) -> Slot | None:
        return next((slot for slot in self.slots if slot.name == name), None)

    def position(self, index: int) -> int:
        return 1 + sum(1 for slot in self.slots if slot.index < index)


@dataclass(frozen=True, slots=True)
class RollingService:
    """A service that rolls (indexed, more than one replica) and its slots."""

    name: str
    applied_hash: str
    slots: SlotSource
    step_timeout_s: float = DEFAULT_STEP_TIMEOUT_S


@dataclass(frozen=True, slots=True)
class StartStep:
    service: str
    replica: str
    spec_hash: str
    deadline: datetime


@dataclass(frozen=True, slots=True)
class AbortStep:
    service: str
    replica: str
    reason: str


@dataclass(frozen=True, slots=True)
class RolloutDecision:
    plan: RolloutPlan | None  # the plan to store (None: keep what is stored)
    events: tuple[str, ...] = ()  # rollout_started | rollout_step | rollout_completed | rollout_aborted
    starts: tuple[StartStep, ...] = ()
    aborts: tuple[AbortStep, ...] = ()


def _last_good(plan: RolloutPlan | None, previous_revision: int | None) -> int | None:
    """The last revision every replica ran, before a new plan starts."""
    if plan is None:
        return previous_revision
    return plan.revision if plan.state == COMPLETED else plan.from_revision


def target_hash(
    service: RollingService, plan: RolloutPlan | None, hashes_of: Mapping[int, Mapping[str, str]]
) -> str:
    """What the service's replicas should run: the applied hash, or after an abort the last good one."""
    if plan is not None and plan.state == ABORTED and plan.from_revision is not None:
        good = hashes_of.get(plan.from_revision, {}).get(service.name)
        if good is not None:
            return good
    return service.applied_hash


def plan_rollout(
    applied_revision: int | None,
    previous_revision: int | None,
    hashes_of: Mapping[int, Mapping[str, str]],
    plan: RolloutPlan | None,
    services: tuple[RollingService, ...],
    now: datetime,
) -> RolloutDecision:
    """The plan to store and the steps to start or abort for one deployment, now."""
    events: list[str] = []
    aborts: list[AbortStep] = []
    if applied_revision is not None and (plan is None or plan.revision != applied_revision):
        rolling = tuple(s for s in services if s.slots.lowest_stale(s.applied_hash) is not None)
        # A plan in progress or aborted is superseded by any new revision (even one that rolls nothing:
        # a rollback to what the replicas run), so status.rollout always speaks of the latest one.
        superseded = plan is not None and plan.state != COMPLETED
        if rolling or superseded:
            total = sum(len(s.slots) for s in rolling)
            plan = RolloutPlan(
                applied_revision,
                _last_good(plan, previous_revision),
                tuple(s.name for s in rolling),
                total,
                0,
                IN_PROGRESS if rolling else COMPLETED,
                None,
                now,
                now,
            )
            events.append("rollout_started" if rolling else "rollout_completed")
    changed = bool(events)
    timed_out: str | None = None  # the replica whose step ran out of time in this pass
    if plan is not None and plan.state == IN_PROGRESS and _step_timed_out(plan, services, now):
        timed_out = plan.step_replica
        # Its replacement is removed below (its hash is no longer the target), or the primitive removed
        # it at the deadline already.
        plan = replace(plan, state=ABORTED, failure_reason=STEP_TIMEOUT, updated_at=now)
        events.append("rollout_aborted")
        changed = True
    starts: list[StartStep] = []
    in_flight = False
    for service in services:
        target = target_hash(service, plan, hashes_of)
        busy = service.slots.busy()
        for slot in busy:
            assert slot.replacement is not None
            if slot.name == timed_out:
                aborts.append(AbortStep(service.name, slot.name, STEP_TIMEOUT))
            elif slot.replacement.spec_hash != target:  # a superseded step, or a revert's target moved
                aborts.append(AbortStep(service.name, slot.name, "superseded"))
            else:
                in_flight = True
        if busy or in_flight:
            continue  # one step at a time across the deployment
        stale = service.slots.lowest_stale(target)
        if stale is None:
            continue
        in_plan = plan is not None and plan.state == IN_PROGRESS and service.name in plan.services
        if in_plan and service.slots.any_not_running(target):
            # A replica of the new spec is not up: the rollout waits for it and takes nothing else down.
            # It waits within the step's time: past the deadline the rollout aborts (the safety tick
            # brings a pass then, when nothing else does).
            assert plan is not None
            if plan.step_deadline is not None and now >= plan.step_deadline:
                plan = replace(plan, state=ABORTED, failure_reason=STEP_TIMEOUT, updated_at=now)
                events.append("rollout_aborted")
                changed = True
            in_flight = True
            continue
        deadline = now + timedelta(seconds=service.step_timeout_s)
        starts.append(StartStep(service.name, stale.name, target, deadline))
        in_flight = True
        if plan is not None and plan.state == IN_PROGRESS and service.name in plan.services:
            step = _position(plan, services, service.name, stale.index)
            plan = replace(
                plan, current_step=step, updated_at=now, step_replica=stale.name, step_deadline=deadline
            )
            events.append("rollout_step")
            changed = True
    if plan is not None and plan.state == IN_PROGRESS and not in_flight and not starts and not aborts:
        plan = replace(
            plan,
            state=COMPLETED,
            current_step=plan.total_steps,
            updated_at=now,
            step_replica=None,
            step_deadline=None,
        )
        events.append("rollout_completed")
        changed = True
    return RolloutDecision(plan if changed else None, tuple(events), tuple(starts), tuple(aborts))


def _step_timed_out(plan: RolloutPlan, services: tuple[RollingService, ...], now: datetime) -> bool:
    """Whether the current step is past its deadline and its replica still runs another spec."""
    if plan.step_deadline is None or now < plan.step_deadline:
        return False
    for service in services:
        slot = service.slots.find(plan.step_replica) if plan.step_replica else None
        if slot is not None:
            return slot.spec_hash != service.applied_hash
    return False


def _position(plan: RolloutPlan, services: tuple[RollingService, ...], name: str, index: int) -> int:
    """Step number (1-based) of ``index`` of service ``name``: services in plan order, then indices."""
    before = 0
    for service in services:
        if service.name not in plan.services:
            continue
        if service.name == name:
            step = before + service.slots.position(index)
            return min(step, plan.total_steps) if plan.total_steps else step
        before += len(service.slots)
    return before
