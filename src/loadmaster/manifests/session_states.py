"""LRS's session states (seed-capabilities A8) read off a replica's status: the vocabulary
docs/session-states.md maps, in one place, for ``describe`` to show beside loadmaster's own phase.

| phase (and detail) | LRS state | set by |
|---|---|---|
| Pending | PENDING | the scheduler, which keeps it waiting (the controllers created it) |
| Scheduled, reason ``pulling`` / ``image_pull_failed`` | INSTANTIATING | the agent |
| Scheduled | SCHEDULED | the scheduler |
| Running, not (yet) healthy | READY | the agent |
| Running, healthy | RUNNING | the agent |
| Failed | FAILED | the leader's restart policy, or the agent (``StartFailed``) |
| Terminating | STOPPING | the controllers or the API; the agent sends the stop signal |
| Terminated | STOPPED | the agent |
| Succeeded | (none: a job's task exited 0) | the agent |
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from loadmaster.manifests.replicas import ReplicaPhase

_PULL_REASONS = frozenset({"pulling", "image_pull_failed"})


class SessionState(NamedTuple):
    lrs: str | None  # None: LRS has no such state
    set_by: str


_BY_PHASE: Mapping[ReplicaPhase, SessionState] = {
    ReplicaPhase.PENDING: SessionState("PENDING", "the scheduler, which keeps it waiting"),
    ReplicaPhase.SCHEDULED: SessionState("SCHEDULED", "the scheduler"),
    ReplicaPhase.FAILED: SessionState("FAILED", "the leader's restart policy, or the agent (StartFailed)"),
    ReplicaPhase.TERMINATING: SessionState(
        "STOPPING", "the controllers or the API; the agent sends the stop signal"
    ),
    ReplicaPhase.TERMINATED: SessionState("STOPPED", "the agent"),
    ReplicaPhase.SUCCEEDED: SessionState(None, "the agent"),
}


def session_state(status: Mapping[str, Any]) -> SessionState:
    """The LRS state a replica with this ``status`` is in, and who moved it there."""
    try:
        phase = ReplicaPhase(status.get("phase", ReplicaPhase.PENDING.value))
    except ValueError:
        return SessionState(None, "unknown phase")
    if phase == ReplicaPhase.SCHEDULED and _phase_reason(status) in _PULL_REASONS:
        return SessionState("INSTANTIATING", "the agent")
    if phase == ReplicaPhase.RUNNING:
        return SessionState("RUNNING" if status.get("healthy") is True else "READY", "the agent")
    return _BY_PHASE[phase]


def _phase_reason(status: Mapping[str, Any]) -> str | None:
    phase_conditions = [c for c in status.get("conditions") or [] if c.get("type") == "Phase"]
    return str(phase_conditions[-1].get("reason")) if phase_conditions else None
