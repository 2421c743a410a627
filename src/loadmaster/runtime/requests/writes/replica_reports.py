"""An agent's report about one of its replicas, checked and merged into the replica's status.

The body (``PUT /api/replicas/{name}/status``, docs/restarts.md):

| field | meaning |
|---|---|
| ``phase`` | Running, Failed, Terminated, Succeeded; or Scheduled while the image is being pulled |
| ``healthy`` | with Running: the health check passes (true) or has not passed yet (false) |
| ``degraded`` | with Running: the health check failed past its retries (the leader restarts it) |
| ``exited`` | with Running: the process exited (``exit_code``); handled like ``degraded`` |
| ``routable``, ``pid`` | with Running: whether it takes traffic, and its process id (kept as reported) |
| ``address`` | with Running: its address from its node's pool (``status.address``; docs/addresses.md) |
| ``reason`` | with Scheduled: ``pulling`` or ``image_pull_failed`` (``message``: ``"<image>: <error>"``);
with another phase change, the Phase condition's reason (the real agent: ``StartFailed``) |
| ``commands_done`` | the highest replica command id the agent has executed |
| ``incarnation`` | which incarnation the report is about (agents key their work by it); a report naming an
incarnation the replica no longer holds (it was replaced) is refused as stale (409) |

A Running-and-healthy report clears ``restart_count`` (and ``degraded``/``exited``). A report that changes
nothing (an agent's retry) writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from loadmaster.manifests import can_transition
from loadmaster.manifests.replicas import ReplicaPhase
from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.runtime.plane.errors import FieldProblem, InvalidError, WriteConflictError
from loadmaster.runtime.plane.phase_condition import (
    phase_condition,
    phase_condition_of,
    with_phase_condition,
)

# Besides its phase, what an agent says of a replica's process (the real agent's shape, docs/agent.md).
PROCESS_FIELDS = ("healthy", "degraded", "exited", "routable", "pid", "commands_done")
REPORT_FIELDS = ("phase", "message", "exit_code", "reason", *PROCESS_FIELDS, "incarnation", "address")
AGENT_PHASES = (
    ReplicaPhase.SCHEDULED,
    ReplicaPhase.RUNNING,
    ReplicaPhase.FAILED,
    ReplicaPhase.TERMINATED,
    ReplicaPhase.SUCCEEDED,
)
IMAGE_PULL_FAILED = "image_pull_failed"
SCHEDULED_REASONS = ("pulling", IMAGE_PULL_FAILED)
_RUNNING_ONLY = ("healthy", "degraded", "exited", "routable")


def checked_report(body: Mapping[str, Any]) -> dict[str, Any]:
    """The body's fields, each of the right type and combination; InvalidError naming every bad field."""
    problems: list[FieldProblem] = []
    phase = body["phase"]
    if phase not in AGENT_PHASES:
        problems.append(FieldProblem("phase", f"expected one of {', '.join(AGENT_PHASES)}, got {phase!r}"))
    for field in ("message", "reason", "incarnation", "address"):
        if field in body and not isinstance(body[field], str):
            problems.append(FieldProblem(field, "expected a string"))
    for field in _RUNNING_ONLY:
        if field in body and not isinstance(body[field], bool):
            problems.append(FieldProblem(field, "expected true or false"))
        elif body.get(field) is not None and phase != ReplicaPhase.RUNNING.value:
            problems.append(FieldProblem(field, f"only with phase Running (this is {phase})"))
    for field, minimum in (("exit_code", None), ("commands_done", 0), ("pid", 0)):
        value = body.get(field)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or (minimum is not None and value < minimum)
        ):
            problems.append(FieldProblem(field, "expected an integer" + (" >= 0" if minimum == 0 else "")))
    reason = body.get("reason")
    if phase == ReplicaPhase.SCHEDULED.value and reason not in SCHEDULED_REASONS:
        problems.append(
            FieldProblem("reason", f"with phase Scheduled: one of {', '.join(SCHEDULED_REASONS)}")
        )
    if body.get("degraded") and body.get("exited"):
        problems.append(FieldProblem("exited", "a report is degraded or exited, not both"))
    if problems:
        raise InvalidError("; ".join(f"{p.path}: {p.message}" for p in problems), problems)
    return dict(body)


def is_new_pull_failure(status: Mapping[str, Any], report: Mapping[str, Any]) -> bool:
    """A report of a failed pull where the replica did not already say so (audited once per episode)."""
    if report.get("reason") != IMAGE_PULL_FAILED:
        return False
    condition = phase_condition_of(status)
    return condition is None or condition.get("reason") != IMAGE_PULL_FAILED


def merged_status(
    name: str, status: dict[str, Any], report: Mapping[str, Any], now: datetime
) -> dict[str, Any] | None:
    """The replica's status after ``report`` (None: the report changes nothing)."""
    current = ReplicaPhase(status.get("phase", ReplicaPhase.PENDING.value))
    target = ReplicaPhase(report["phase"])
    before = dict(status)
    stamp = format_timestamp(now)
    condition: dict[str, Any] | None = None
    message = report.get("message")
    if current != target:
        if not can_transition(current, target):
            raise WriteConflictError(f"replicas/{name}: a replica cannot go from {current} to {target}")
        status["phase"] = target.value
        if target == ReplicaPhase.RUNNING:
            status["started_at"] = stamp
        elif target != ReplicaPhase.SCHEDULED:
            status["finished_at"] = stamp
        text = message or f"reported {target.value} by the agent"
        # The agent's reason when it gives one (the real agent: StartFailed for a command not found).
        reason = str(report.get("reason") or target.value)
        condition = phase_condition(target != ReplicaPhase.FAILED, reason, text, now)
    if report.get("exit_code") is not None:
        status["exit_code"] = report["exit_code"]
    if report.get("commands_done") is not None:
        status["commands_done"] = max(int(status.get("commands_done", 0)), report["commands_done"])
    if target == ReplicaPhase.SCHEDULED:
        reason = str(report["reason"])
        condition = phase_condition(False, reason, message or reason, now)
    elif target == ReplicaPhase.RUNNING:
        health = _health(status, report, now)
        # A failure is the news; otherwise a start says Running and only a later change says Healthy.
        condition = health if status.get("degraded") or status.get("exited") else condition or health
    if condition is not None:
        previous = phase_condition_of(before)
        if previous is None or (previous.get("reason"), previous.get("message")) != (
            condition["reason"],
            condition["message"],
        ):
            status["conditions"] = with_phase_condition(status, condition)
    return None if status == before else status


def _health(status: dict[str, Any], report: Mapping[str, Any], now: datetime) -> dict[str, Any] | None:
    """Fold a Running report's health into ``status``; the Phase condition it calls for, if any."""
    for field in ("degraded", "exited", "routable", "pid", "address"):
        if report.get(field) is not None:
            status[field] = report[field]
    if report.get("exited") is False and report.get("exit_code") is None:
        status.pop("exit_code", None)  # running again: the previous run's exit code is gone
    if report.get("degraded") or report.get("exited"):
        failure = "degraded" if report.get("degraded") else "exited"
        status["healthy"] = False
        default = (
            "health check failing past its retries"
            if failure == "degraded"
            else f"exited with code {report.get('exit_code')}"
        )
        return phase_condition(False, failure, report.get("message") or default, now)
    healthy = report.get("healthy")
    if healthy is True:
        was_healthy = status.get("healthy") is True
        status["healthy"] = True
        status["restart_count"] = 0
        for field in ("degraded", "exited"):  # healthy says the process runs and passes its checks
            if status.get(field):
                status[field] = False
        if not was_healthy:
            return phase_condition(True, "Healthy", report.get("message") or "running and healthy", now)
    elif healthy is False:
        status["healthy"] = False
    return None
