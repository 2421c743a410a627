"""What a simulated node reports for a replica in each phase."""

from __future__ import annotations

import pytest

from loadmaster.agent.simulation.lifecycle import next_report, status_report
from loadmaster.manifests import ReplicaPhase, can_transition


def replica(phase: str | None) -> dict[str, object]:
    status: dict[str, object] = {"node_ref": "sim-01"}
    if phase is not None:
        status["phase"] = phase
    return {"metadata": {"name": "web-api-0"}, "status": status}


@pytest.mark.parametrize(
    ("phase", "report"),
    [
        pytest.param("Scheduled", "Running", id="scheduled-is-started"),
        pytest.param("Terminating", "Terminated", id="terminating-is-removed"),
        pytest.param("Pending", None, id="pending-waits-for-the-scheduler"),
        pytest.param(None, None, id="no-phase-means-pending"),
        pytest.param("Running", None, id="running-needs-nothing"),
        pytest.param("Failed", None, id="failed-is-final-for-the-node"),
        pytest.param("Terminated", None, id="terminated-is-done"),
        pytest.param("Succeeded", None, id="succeeded-is-done"),
    ],
)
def test_each_phase_gets_the_report_a_node_would_send(phase: str | None, report: str | None) -> None:
    assert next_report(replica(phase)) == report


@pytest.mark.parametrize("phase", [phase.value for phase in ReplicaPhase])
def test_every_report_is_a_transition_the_phase_table_allows(phase: str) -> None:
    report = next_report(replica(phase))
    if report is not None:
        assert can_transition(phase, report)
        assert status_report(report, "web-0@1")["phase"] == report
