"""The LRS session states (docs/session-states.md) read off a replica's status, one case per row."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from loadmaster.manifests.session_states import session_state

DOC = Path(__file__).parents[2] / "docs" / "session-states.md"


def phase(name: str, reason: str | None = None, **fields: object) -> dict[str, object]:
    conditions = [{"type": "Phase", "status": "False", "reason": reason}] if reason else []
    return {"phase": name, "conditions": conditions, **fields}


@pytest.mark.parametrize(
    ("status", "lrs"),
    [
        ({}, "PENDING"),
        (phase("Pending", "Unschedulable"), "PENDING"),
        (phase("Scheduled", "Scheduled"), "SCHEDULED"),
        (phase("Scheduled", "pulling"), "INSTANTIATING"),
        (phase("Scheduled", "image_pull_failed"), "INSTANTIATING"),
        (phase("Running", healthy=False), "READY"),
        (phase("Running"), "READY"),
        (phase("Running", healthy=True), "RUNNING"),
        (phase("Failed", "restart_exhausted"), "FAILED"),
        (phase("Terminating"), "STOPPING"),
        (phase("Terminated"), "STOPPED"),
        (phase("Succeeded"), None),
    ],
)
def test_a_replica_status_reads_as_its_lrs_session_state(status: dict[str, object], lrs: str | None) -> None:
    assert session_state(status).lrs == lrs


def test_every_state_the_code_names_is_a_row_of_the_docs_table() -> None:
    rows = re.findall(r"^\| ([A-Z]+) \|", DOC.read_text(), flags=re.MULTILINE)
    named = {
        session_state(s).lrs
        for s in (
            phase("Pending"),
            phase("Scheduled"),
            phase("Scheduled", "pulling"),
            phase("Running"),
            phase("Running", healthy=True),
            phase("Failed"),
            phase("Terminating"),
            phase("Terminated"),
        )
    }
    assert named <= set(rows), named - set(rows)
