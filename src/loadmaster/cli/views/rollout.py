"""A deployment's rollout in one line, for ``describe deployment`` and ``status -w``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def rollout_line(rollout: Mapping[str, Any] | None) -> str:
    """``in_progress: step 2/3 to revision 3 (from 2), replacing web-api-1`` (``-`` when never rolled)."""
    if not rollout:
        return "-"
    state = str(rollout.get("state", "?"))
    line = (
        f"{state}: step {rollout.get('current_step', '?')}/{rollout.get('total_steps', '?')} "
        f"to revision {rollout.get('revision', '?')} (from {rollout.get('from_revision') or '-'})"
    )
    if state == "in_progress" and rollout.get("step_replica"):
        line += f", replacing {rollout['step_replica']}"
    if rollout.get("failure_reason"):
        line += f", {rollout['failure_reason']}"
    return line


def revisions_line(status: Mapping[str, Any]) -> str:
    """``3 (previous 2; kept 1, 2, 3)``: the applied revision and what a rollback would go to."""
    revisions = status.get("revisions")
    kept = (
        [str(r.get("revision")) for r in revisions if isinstance(r, Mapping)]
        if isinstance(revisions, list)
        else []
    )
    previous = status.get("previous_revision")
    previous_text = "-" if previous is None else str(previous)
    return f"{status.get('applied_revision', '-')} (previous {previous_text}; kept {', '.join(kept) or '-'})"
