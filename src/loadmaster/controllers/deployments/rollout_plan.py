"""A deployment's RolloutPlan, as stored in ``status.rollout`` (the rules that move it: ``rollout.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

IN_PROGRESS, COMPLETED, ABORTED = "in_progress", "completed", "aborted"
STEP_TIMEOUT = "step_timeout"  # the failure_reason of a step not done in time
DEFAULT_STEP_TIMEOUT_S = 60.0  # the seeds' rollout_step_timeout


@dataclass(frozen=True, slots=True)
class RolloutPlan:
    revision: int  # the revision being rolled to
    from_revision: int | None  # the last revision every replica ran (what an abort returns to)
    services: tuple[str, ...]
    total_steps: int
    current_step: int  # the step in flight or last done (1-based; 0 before the first)
    state: str  # IN_PROGRESS | COMPLETED | ABORTED
    failure_reason: str | None
    started_at: datetime
    updated_at: datetime
    step_replica: str | None = None  # the replica of the current step
    step_deadline: datetime | None = None
