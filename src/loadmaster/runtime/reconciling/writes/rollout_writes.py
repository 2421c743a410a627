"""``UpdateRollout`` -> the deployment's ``status.rollout`` and one audit entry per rollout event.

| event | details |
|---|---|
| ``rollout_started`` | revision, from_revision, services, total_steps |
| ``rollout_step`` | revision, current_step, total_steps, replica, step_deadline |
| ``rollout_completed`` | revision, total_steps |
| ``rollout_aborted`` | revision, from_revision, failure_reason, replica |
"""

from __future__ import annotations

from typing import Any

from loadmaster.controllers.changes import UpdateRollout
from loadmaster.manifests import DEPLOYMENT, object_ref
from loadmaster.runtime.plane.audit import AuditEntry
from loadmaster.runtime.plane.object_cache import ObjectCache
from loadmaster.runtime.plane.storage.store_layout import encode_object, object_key
from loadmaster.runtime.reconciling.writes.change_audit import CONTROLLERS
from loadmaster.runtime.reconciling.writes.rollout_status import plan_status
from loadmaster.store.interface import Op, Put


def rollout_ops(cache: ObjectCache, change: UpdateRollout) -> list[Op] | None:
    """The put of the new plan (None: the deployment changed or went away since it was planned)."""
    cached = cache.get(DEPLOYMENT, change.deployment)
    if cached is None or cached.mod_revision != change.revision:
        return None
    status = {**(cached.obj.get("status") or {}), "rollout": plan_status(change.plan)}
    obj = {**cached.obj, "status": status}
    return [
        Put(object_key(DEPLOYMENT, change.deployment), encode_object(obj), expect_revision=change.revision)
    ]


def rollout_entries(change: UpdateRollout) -> list[AuditEntry]:
    plan, ref = change.plan, object_ref(DEPLOYMENT, change.deployment)
    entries = []
    for event in change.events:
        details: dict[str, Any] = {"revision": plan.revision, "total_steps": plan.total_steps}
        if event == "rollout_started":
            details.update(from_revision=plan.from_revision, services=list(plan.services))
            message = (
                f"rolling {', '.join(plan.services)} to revision {plan.revision} in {plan.total_steps} steps"
            )
        elif event == "rollout_step":
            deadline = plan.step_deadline.isoformat() if plan.step_deadline else None
            details.update(current_step=plan.current_step, replica=plan.step_replica, step_deadline=deadline)
            message = f"step {plan.current_step}/{plan.total_steps}: replacing {plan.step_replica}"
        elif event == "rollout_aborted":
            details.update(
                from_revision=plan.from_revision,
                failure_reason=plan.failure_reason,
                replica=plan.step_replica,
            )
            message = (
                f"rollout to revision {plan.revision} aborted ({plan.failure_reason}) at step "
                f"{plan.current_step}/{plan.total_steps}; back to revision {plan.from_revision}"
            )
        else:
            message = f"rollout to revision {plan.revision} completed"
        entries.append(AuditEntry(event, CONTROLLERS, ref, message, details))
    return entries
