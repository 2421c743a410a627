"""What a simulated node does with a replica assigned to it: start what is Scheduled, remove what is
Terminating. A real agent would run a container between those two reports; the simulation answers at once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadmaster.manifests import ReplicaPhase

# The report the simulated node sends for a replica in each phase it acts on; every other phase is
# either waiting for the scheduler (Pending) or already final from the node's point of view.
_REPORT_FOR_PHASE = {
    ReplicaPhase.SCHEDULED.value: ReplicaPhase.RUNNING.value,
    ReplicaPhase.TERMINATING.value: ReplicaPhase.TERMINATED.value,
}


def replica_phase(replica: Mapping[str, Any]) -> str:
    status = replica.get("status") or {}
    return str(status.get("phase", ReplicaPhase.PENDING.value))


def replica_node(replica: Mapping[str, Any]) -> str | None:
    status = replica.get("status") or {}
    node = status.get("node_ref")
    return str(node) if node else None


def next_report(replica: Mapping[str, Any]) -> str | None:
    """The phase the node reports for this replica now, or None when it has nothing to say."""
    return _REPORT_FOR_PHASE.get(replica_phase(replica))


def status_report(phase: str, incarnation: str) -> dict[str, Any]:
    """The body of ``PUT /api/replicas/{name}/status`` about one incarnation (a simulated start always
    succeeds); the server refuses it if the name no longer holds that incarnation."""
    if phase == ReplicaPhase.RUNNING.value:
        return {"phase": phase, "message": "started by the simulated agent", "incarnation": incarnation}
    return {
        "phase": phase,
        "message": "stopped by the simulated agent",
        "exit_code": 0,
        "incarnation": incarnation,
    }
