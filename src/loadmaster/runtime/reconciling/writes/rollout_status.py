"""A RolloutPlan <-> the deployment's ``status.rollout`` (JSON: times as RFC 3339 text).

``status.rollout`` is what ``get deployment -o json``, ``describe deployment`` and a timeline's
``observed.deployments.<d>.rollout`` show: ``revision, from_revision, services, total_steps,
current_step, state, failure_reason, started_at, updated_at, step_replica, step_deadline``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadmaster.controllers.deployments.rollout_plan import RolloutPlan
from loadmaster.manifests.timestamps import format_timestamp, parse_timestamp


def plan_status(plan: RolloutPlan) -> dict[str, Any]:
    return {
        "revision": plan.revision,
        "from_revision": plan.from_revision,
        "services": list(plan.services),
        "total_steps": plan.total_steps,
        "current_step": plan.current_step,
        "state": plan.state,
        "failure_reason": plan.failure_reason,
        "started_at": format_timestamp(plan.started_at),
        "updated_at": format_timestamp(plan.updated_at),
        "step_replica": plan.step_replica,
        "step_deadline": format_timestamp(plan.step_deadline) if plan.step_deadline else None,
    }


def plan_of(value: object) -> RolloutPlan | None:
    """The stored plan (None when there is none); a malformed one raises, so the controller loop isolates
    its deployment instead of rolling it blind."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValueError(f"status.rollout: expected a mapping, got {type(value).__name__}")
    deadline = value.get("step_deadline")
    from_revision = value.get("from_revision")
    return RolloutPlan(
        revision=int(value["revision"]),
        from_revision=int(from_revision) if from_revision is not None else None,
        services=tuple(str(s) for s in value.get("services", [])),
        total_steps=int(value["total_steps"]),
        current_step=int(value["current_step"]),
        state=str(value["state"]),
        failure_reason=value.get("failure_reason"),
        started_at=parse_timestamp(value["started_at"]),
        updated_at=parse_timestamp(value["updated_at"]),
        step_replica=value.get("step_replica"),
        step_deadline=parse_timestamp(deadline) if deadline else None,
    )
