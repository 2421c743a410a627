"""The status report a replica's process truth calls for, and whether the stored status already says it.

Running replicas report ``phase: Running`` with ``pid``, ``healthy``, ``degraded``, ``exited`` (and
``exit_code``), ``routable``, ``commands_done`` and, given one, ``address``; a job task that exited 0
reports Succeeded; a process that could not start at all reports Failed (restarting would fail the same
way); a stopped process reports Terminated once the replica is Terminating (a deleted one needs no report).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from loadmaster.agent.replicas.replica_launch import status_of

# Fields that only explain a report: a change in them alone is not worth sending.
_EXPLANATIONS = ("message", "reason")
_FINAL = ("Failed", "Succeeded", "Terminated")


@dataclass(frozen=True, slots=True)
class ProcessTruth:
    """What is true of the process right now, as this agent sees it."""

    state: str = "starting"  # starting | running | exited | succeeded | start_failed | stopped
    pid: int | None = None
    healthy: bool = False
    degraded: bool = False
    routable: bool = True
    exit_code: int | None = None
    message: str = ""


def report_for(
    truth: ProcessTruth,
    replica: Mapping[str, Any],
    commands_done: int,
    incarnation: str,
    address: str | None = None,
) -> dict[str, Any] | None:
    stored_phase = status_of(replica).get("phase")
    identity = {"incarnation": incarnation} if (replica.get("spec") or {}).get("incarnation") else {}
    if truth.state == "stopped":
        if stored_phase != "Terminating":
            return None
        body: dict[str, Any] = {"phase": "Terminated", "message": truth.message, **identity}
        if truth.exit_code is not None:
            body["exit_code"] = truth.exit_code
        return body
    if truth.state == "starting" or stored_phase in _FINAL or stored_phase == "Terminating":
        return None
    if truth.state == "start_failed":
        return {"phase": "Failed", "reason": "StartFailed", "message": truth.message, **identity}
    if truth.state == "succeeded":
        return {"phase": "Succeeded", "exit_code": 0, "message": truth.message, **identity}
    exited = truth.state == "exited"
    body = {
        "phase": "Running",
        "healthy": truth.healthy and not exited,
        "degraded": truth.degraded and not exited,  # an exit is the failure to report, not both
        "exited": exited,
        "routable": truth.routable,
        "commands_done": commands_done,
        "message": truth.message,
        "reason": "Exited" if exited else ("Degraded" if truth.degraded else "Running"),
        **identity,
    }
    if truth.pid is not None:
        body["pid"] = truth.pid
    if address is not None:
        body["address"] = address
    if exited and truth.exit_code is not None:
        body["exit_code"] = truth.exit_code
    return body


def needs_report(
    body: Mapping[str, Any], replica: Mapping[str, Any], accepted: Mapping[str, Any] | None
) -> bool:
    """Whether ``body`` says something the server has not accepted yet: it differs from the last report
    the server accepted (explanations aside), or the stored phase is not the one it reports (a report
    lost, or a new agent that has not reported yet). Comparing with what was accepted rather than with
    stored fields keeps the agent quiet against a server that stores fewer of them."""
    if status_of(replica).get("phase", "Pending") != body.get("phase"):
        return True
    if accepted is None:
        return True
    return _essence(body) != _essence(accepted)


def _essence(body: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if key not in _EXPLANATIONS}
