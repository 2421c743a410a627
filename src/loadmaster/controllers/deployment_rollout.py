"""The deployment controller's rolling part: services with more than one replica roll through the
replacement primitive, one replica at a time, as ``rollout.plan_rollout`` decides (the rules are there).

This module turns the deployment's replicas into slots (a replica X and its replacement ``X.next`` are
one slot), and the decision into changes: ``StartReplacement`` (reason ``rollout``, the target spec hash,
the step's deadline), ``AbortReplacement`` and ``UpdateRollout``. A service with one replica is simply
replaced (``StartReplacement`` without a plan, as soon as its hash differs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from loadmaster.controllers.changes import AbortReplacement, Change, StartReplacement, UpdateRollout
from loadmaster.controllers.rollout import Replacement, RollingService, Slot, plan_rollout, target_hash
from loadmaster.controllers.rollout_plan import DEFAULT_STEP_TIMEOUT_S
from loadmaster.controllers.views import DeploymentView, ReplicaView, ServiceView

ROLLOUT = "rollout"  # the reason every replacement started here carries
GLOBAL = "global"


def rolls(service: ServiceView) -> bool:
    """Whether a spec change of ``service`` is rolled step by step (else its replicas are replaced)."""
    return service.placement != GLOBAL and service.replicas > 1


def _slots(replicas: Sequence[ReplicaView]) -> tuple[tuple[Slot, ...], dict[str, ReplicaView]]:
    """Slots, lowest index first, and every replica and replacement by name."""
    by_name = {r.name: r for r in replicas}
    nexts = {r.replaces: r for r in replicas if r.replaces is not None and not r.is_leaving}
    slots = []
    for replica in replicas:
        if replica.is_leaving or replica.replaces is not None or replica.index is None:
            continue
        flight = nexts.get(replica.name)
        replacement = Replacement(flight.spec_hash, flight.phase, flight.healthy) if flight else None
        slots.append(
            Slot(replica.name, replica.index, replica.spec_hash, replica.phase, replica.healthy, replacement)
        )
    slots.sort(key=lambda s: s.index)
    return tuple(slots), by_name


def service_targets(deployment: DeploymentView) -> dict[str, str]:
    """What each service's replicas should run now (after an abort: the last good revision's hash)."""
    targets = {}
    for service in deployment.services:
        if rolls(service):
            rolling = RollingService(service.name, service.spec_hash, ())
            targets[service.name] = target_hash(rolling, deployment.rollout, deployment.revision_hashes)
        else:
            targets[service.name] = service.spec_hash
    return targets


def reconcile_rollout(
    deployment: DeploymentView,
    by_service: Mapping[str | None, Sequence[ReplicaView]],
    now: datetime,
    default_step_timeout_s: float = DEFAULT_STEP_TIMEOUT_S,
) -> list[Change]:
    """The rollout's changes for one deployment (its replicas grouped by service)."""
    services: list[RollingService] = []
    by_name: dict[str, ReplicaView] = {}
    changes: list[Change] = []
    for service in deployment.services:
        replicas = by_service.get(service.name, ())
        slots, names = _slots(replicas)
        by_name.update(names)
        if rolls(service):
            timeout = service.step_timeout_s if service.step_timeout_s is not None else default_step_timeout_s
            services.append(RollingService(service.name, service.spec_hash, slots, timeout))
        elif service.placement != GLOBAL:
            changes.extend(_replace_single(service, slots, by_name))
    decision = plan_rollout(
        deployment.applied_revision,
        deployment.previous_revision,
        deployment.revision_hashes,
        deployment.rollout,
        tuple(services),
        now,
    )
    for abort in decision.aborts:
        flight = by_name.get(f"{abort.replica}.next")
        if flight is not None:
            message = (
                f"rollout of {deployment.name}: replacement of {abort.replica} given up ({abort.reason})"
            )
            changes.append(AbortReplacement(abort.replica, flight.revision, abort.reason, message))
    for start in decision.starts:
        replica = by_name[start.replica]
        changes.append(
            StartReplacement(
                start.replica, replica.revision, ROLLOUT, start.spec_hash, None, (), start.deadline
            )
        )
    if decision.plan is not None:
        changes.append(UpdateRollout(deployment.name, deployment.revision, decision.plan, decision.events))
    return changes


def _replace_single(
    service: ServiceView, slots: Sequence[Slot], by_name: Mapping[str, ReplicaView]
) -> list[Change]:
    """A service with one replica (or none) is not rolled: a replica of another spec is simply replaced."""
    changes: list[Change] = []
    for slot in slots:
        if slot.spec_hash == service.spec_hash:
            continue
        if slot.replacement is None:
            replica = by_name[slot.name]
            changes.append(StartReplacement(slot.name, replica.revision, ROLLOUT, service.spec_hash))
        elif slot.replacement.spec_hash != service.spec_hash:
            flight = by_name[f"{slot.name}.next"]
            changes.append(
                AbortReplacement(slot.name, flight.revision, "superseded", "the spec changed again")
            )
    return changes
