"""The deployment controller's rolling part: services with more than one replica roll through the
replacement primitive, one replica at a time, as ``rollout.plan_rollout`` decides (the rules are there).

This module answers the rules' questions from the deployment's slot index (``service_slots.py``; a
replica X and its replacement ``X.next`` are one slot) and turns the decision into changes:
``StartReplacement`` (reason ``rollout``, the target spec hash, the step's deadline),
``AbortReplacement`` and ``UpdateRollout``. A service with one replica is simply replaced
(``StartReplacement`` without a plan, as soon as its hash differs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from loadmaster.controllers.changes import AbortReplacement, Change, StartReplacement, UpdateRollout
from loadmaster.controllers.deployments.rollout import (
    Replacement,
    RollingService,
    Slot,
    SlotTuple,
    plan_rollout,
    target_hash,
)
from loadmaster.controllers.deployments.rollout_plan import DEFAULT_STEP_TIMEOUT_S
from loadmaster.controllers.deployments.service_slots import DeploymentSlots, ServiceSlots
from loadmaster.controllers.views import DeploymentView, ReplicaView, ServiceView

ROLLOUT = "rollout"  # the reason every replacement started here carries
GLOBAL = "global"


def rolls(service: ServiceView) -> bool:
    """Whether a spec change of ``service`` is rolled step by step (else its replicas are replaced)."""
    return service.placement != GLOBAL and service.replicas > 1


def _slot(replica: ReplicaView, replacement: ReplicaView | None) -> Slot:
    flight = None
    if replacement is not None:
        flight = Replacement(replacement.spec_hash, replacement.phase, replacement.healthy)
    index = replica.index if replica.index is not None else -1
    return Slot(replica.name, index, replica.spec_hash, replica.phase, replica.healthy, flight)


@dataclass(frozen=True, slots=True)
class IndexedSlots:
    """A service's first ``wanted`` slots as the rollout rules ask for them (``rollout.SlotSource``),
    answered from the service's index: no answer walks the service."""

    service: ServiceSlots
    views: Mapping[str, ReplicaView]
    wanted: int

    def __len__(self) -> int:
        return min(len(self.service), self.wanted)

    def lowest_stale(self, target: str) -> Slot | None:
        replica = self.service.lowest_other_than(target, self.wanted)
        return None if replica is None else _slot(replica, self.service.replacements.get(replica.name))

    def any_not_running(self, spec_hash: str) -> bool:
        return self.service.any_not_running(spec_hash)

    def busy(self) -> Sequence[Slot]:
        busy = []
        for name, replacement in sorted(self.service.replacements.items()):
            replica = self.views.get(name)
            if replica is not None and replica.index is not None and not replica.is_leaving:
                busy.append(_slot(replica, replacement))
        return busy

    def find(self, name: str) -> Slot | None:
        replica = self.views.get(name)
        if replica is None or replica.index is None or self.service.active.get(replica.index) is not replica:
            return None
        return _slot(replica, self.service.replacements.get(name))

    def position(self, index: int) -> int:
        return self.service.position(index)


def service_targets(deployment: DeploymentView) -> dict[str, str]:
    """What each service's replicas should run now (after an abort: the last good revision's hash)."""
    targets = {}
    for service in deployment.services:
        if rolls(service):
            rolling = RollingService(service.name, service.spec_hash, SlotTuple(()))
            targets[service.name] = target_hash(rolling, deployment.rollout, deployment.revision_hashes)
        else:
            targets[service.name] = service.spec_hash
    return targets


def reconcile_rollout(
    deployment: DeploymentView,
    slots: DeploymentSlots,
    now: datetime,
    default_step_timeout_s: float = DEFAULT_STEP_TIMEOUT_S,
) -> list[Change]:
    """The rollout's changes for one deployment."""
    services: list[RollingService] = []
    changes: list[Change] = []
    for service in deployment.services:
        indexed = slots.service(service.name)
        if rolls(service):
            timeout = service.step_timeout_s if service.step_timeout_s is not None else default_step_timeout_s
            source = IndexedSlots(indexed, slots.views, service.replicas)
            services.append(RollingService(service.name, service.spec_hash, source, timeout))
        elif service.placement != GLOBAL:
            changes.extend(_replace_single(service, indexed))
    decision = plan_rollout(
        deployment.applied_revision,
        deployment.previous_revision,
        deployment.revision_hashes,
        deployment.rollout,
        tuple(services),
        now,
    )
    for abort in decision.aborts:
        flight = slots.service(abort.service).replacements.get(abort.replica)
        late = (
            flight is not None
            and flight.replacement_deadline is not None
            and flight.replacement_deadline <= now
        )
        if flight is not None and not late:  # a late one is the replacement rule's to remove, this same pass
            message = (
                f"rollout of {deployment.name}: replacement of {abort.replica} given up ({abort.reason})"
            )
            changes.append(AbortReplacement(abort.replica, flight.revision, abort.reason, message))
    for start in decision.starts:
        replica = slots.views[start.replica]
        changes.append(
            StartReplacement(
                start.replica, replica.revision, ROLLOUT, start.spec_hash, deadline=start.deadline
            )
        )
    if decision.plan is not None:
        changes.append(UpdateRollout(deployment.name, deployment.revision, decision.plan, decision.events))
    return changes


def _replace_single(service: ServiceView, slots: ServiceSlots) -> list[Change]:
    """A service with one replica (or none) is not rolled: a replica of another spec is simply replaced
    (make-before-break, at once, no deadline)."""
    changes: list[Change] = []
    for replica in slots.kept(max(service.replicas, 0)):
        if replica.spec_hash == service.spec_hash:
            continue
        flight = slots.replacements.get(replica.name)
        if flight is None:
            changes.append(StartReplacement(replica.name, replica.revision, ROLLOUT, service.spec_hash))
        elif flight.spec_hash != service.spec_hash:
            changes.append(
                AbortReplacement(replica.name, flight.revision, "superseded", "the spec changed again")
            )
    return changes
