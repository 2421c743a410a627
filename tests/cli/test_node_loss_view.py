"""The node-loss timeline as `describe node` and `why` print it: every step with its time, and the
next action with exactly when it is due."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from loadmaster.cli.views.node_loss import node_loss_view
from loadmaster.cli.views.why import explanation_view
from tests.cli.views import render

NOW = datetime(2026, 11, 21, 11, 0, 0, tzinfo=UTC)

WAITING: dict[str, Any] = {
    "node": "n1",
    "state": "NotReady",
    "not_ready_at": "2026-11-21T10:59:00Z",
    "policy": "single_replica",
    "node_loss_wait_s": 30.0,
    "agent_down_wait_s": 30.0,
    "probe": {"answer": "agent_down", "at": "2026-11-21T10:59:30Z"},
    "lost_at": None,
    "moved": [],
    "steps": [
        {"at": "2026-11-21T10:59:00Z", "what": "NotReady (heartbeat missing): the node-loss clock starts"},
        {"at": "2026-11-21T10:59:30Z", "what": "probe: host up, agent down"},
    ],
    "next": {"at": "2026-11-21T11:00:00Z", "action": "act", "what": "policy single_replica acts"},
}


def test_the_timeline_shows_each_step_and_when_the_next_action_is_due() -> None:
    text = render(node_loss_view(WAITING, NOW))
    assert "node n1: policy single_replica, probe after 30s, 30s more if only the agent is down" in text
    assert "2026-11-21T10:59:30Z  probe: host up, agent down" in text
    assert "next: policy single_replica acts at 2026-11-21T11:00:00Z (due now)" in text


def test_a_lost_node_has_no_next_action() -> None:
    lost = {**WAITING, "lost_at": "2026-11-21T11:00:00Z", "next": None}
    assert "next: nothing (what moved stays where it is when the node returns)" in render(
        node_loss_view(lost, NOW)
    )


def test_why_shows_the_node_loss_of_the_replicas_node() -> None:
    why = {"replica": "db-0", "phase": "Running", "node_ref": "n1", "node_loss": WAITING}
    text = render(explanation_view(why, NOW))
    assert "node loss:" in text and "probe: host up, agent down" in text
