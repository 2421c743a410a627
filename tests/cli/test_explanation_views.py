"""``why``, ``preview`` and ``status`` render what the server sent, every part of it, and nothing made up."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from loadmaster.cli.views.preview import preview_view
from loadmaster.cli.views.status import status_view
from loadmaster.cli.views.status_state import ClusterStatus
from loadmaster.cli.views.why import explanation_view
from tests.cli.views import node, render, replica

NOW = datetime(2026, 11, 21, 11, 0, 0, tzinfo=UTC)

WHY_PENDING: dict[str, Any] = {
    "replica": "train-0",
    "phase": "Pending",
    "node_ref": None,
    "summary": {"capacity": 2, "unschedulable": 1},
    "nodes": {
        "n1": "insufficient gpu: requests 1, 0 free",
        "n2": "insufficient gpu",
        "n3": "node is cordoned",
    },
    "hints": ["n3 would fit if uncordoned"],
    "reason": "gang of 4 needs 4 nodes, 3 fit",
    "attempts": 5,
    "next_attempt_at": "2026-11-21T11:04:30Z",
}


def test_why_shows_every_part_of_a_pending_explanation() -> None:
    text = render(explanation_view(WHY_PENDING, NOW))
    assert "replica train-0 is Pending" in text
    assert "reason: gang of 4 needs 4 nodes, 3 fit" in text
    assert "nodes that cannot take it (3), by first reason:" in text
    assert [
        line.split() for line in text.splitlines() if line.strip().startswith(("capacity", "unschedulable"))
    ] == [
        ["capacity", "2"],
        ["unschedulable", "1"],
    ]
    for node_name, reason in WHY_PENDING["nodes"].items():
        assert any(node_name in line and reason in line for line in text.splitlines())
    assert "  - n3 would fit if uncordoned" in text
    assert "attempts: 5; next attempt: at 2026-11-21T11:04:30Z (in 4m30s)" in text


def test_why_says_when_a_replica_fits_only_after_a_scale_up_and_not_when_it_fits_now() -> None:
    verdict = {"verdict": "fits_after_scale_up", "template": "medium", "tier": "smallest_fit",
               "message": "fits after scale-up with template medium"}  # fmt: skip
    text = render(explanation_view({**WHY_PENDING, "scale_up": verdict}, NOW))
    assert "scale-up: fits after scale-up with template medium" in text
    fits = {"verdict": "fits_now", "message": "an existing node can take it"}
    assert "scale-up" not in render(explanation_view({**WHY_PENDING, "scale_up": fits}, NOW))


def test_why_for_a_placed_replica_names_its_node_and_shows_no_empty_sections() -> None:
    why = {
        "replica": "shop-api-0",
        "phase": "Running",
        "node_ref": "n1",
        "summary": {},
        "nodes": {},
        "attempts": 1,
    }
    text = render(explanation_view(why, NOW))
    assert text.splitlines()[0] == "replica shop-api-0 is Running on node n1"
    assert "cannot take it" not in text and "what would help" not in text
    assert "next attempt: -" in text


PREVIEW = {
    "items": [
        {
            "replica": "shop-api-0",
            "node": "n2",
            "candidates": [
                {"node": "n2", "total": 91.5, "scores": {"least_allocated": 60.0, "balanced": 31.5}},
                {"node": "n1", "total": 40.25, "scores": {"least_allocated": 20.0, "balanced": 20.25}},
            ],
            "rejections": {"summary": {"capacity": 1}, "nodes": {"n3": "insufficient cpu"}},
            "forecast": {"n2": {"cpu": 0.5, "memory": 0.25}},
        },
        {"replica": "shop-api-1", "node": None, "candidates": [], "rejections": {}, "forecast": {}},
    ]
}


def test_preview_ranks_candidates_with_a_column_per_scorer_then_rejections_and_forecast() -> None:
    lines = [line.split() for line in render(preview_view(PREVIEW)).splitlines() if line.strip()]
    assert ["replica", "shop-api-0", "would", "go", "to", "node", "n2"] in lines
    assert ["RANK", "NODE", "TOTAL", "(0-100)", "BALANCED", "LEAST_ALLOCATED"] in lines
    assert ["1", "n2", "91.5", "31.5", "60"] in lines
    assert ["2", "n1", "40.25", "20.25", "20"] in lines
    assert ["rejected:", "capacity", "1"] in lines
    assert ["n3", "insufficient", "cpu"] in lines
    assert ["n2", "50%", "25%"] in lines
    assert ["replica", "shop-api-1", "would", "not", "be", "placed", "(no", "node", "fits)"] in lines


def test_preview_says_what_it_assumed_and_shows_the_warning_json_has() -> None:
    item = {"replica": "r", "node": None, "candidates": [], "warning": "queue q does not exist; it waits"}
    text = render(preview_view({"items": [item]}))
    assert text.startswith("assuming the files are applied now")
    assert "warning: queue q does not exist; it waits" in text


def test_an_order_scorer_is_shown_as_a_rank_not_its_hash() -> None:
    ranked = [
        {"node": "n2", "total": 1, "scores": {"rendezvous": 1}, "ranked_by": ["rendezvous"]},
        {"node": "n1", "total": 2, "scores": {"rendezvous": 2}, "ranked_by": ["rendezvous"]},
    ]
    item = {"replica": "r", "node": "n2", "candidates": ranked}
    lines = [line.split() for line in render(preview_view({"items": [item]})).splitlines() if line.strip()]
    assert ["RANK", "NODE", "TOTAL", "(RANK)", "RENDEZVOUS", "RANK"] in lines
    assert ["2", "n1", "2", "2"] in lines


def test_preview_shows_only_the_top_candidates_and_says_so() -> None:
    many = [{"node": f"n{i}", "total": 100 - i, "scores": {}} for i in range(30)]
    text = render(preview_view({"items": [{"replica": "r", "node": "n0", "candidates": many}]}, top=3))
    assert "candidates (top 3 of 30), best first:" in text
    assert "n2 " in text and "n3 " not in text


def test_status_counts_nodes_and_phases_and_follows_watch_events() -> None:
    status = ClusterStatus(
        server="http://127.0.0.1:7480", info={"leader": {"leader": "a", "is_leader": True}}
    )
    waiting = replica("shop-api-1", "Pending")
    waiting["status"]["conditions"] = [
        {"type": "Phase", "reason": "Unschedulable", "message": "0/2 nodes fit"}
    ]
    status.relist(
        [node("n1", {"cpu": 1}), node("n2", {"cpu": 1}, state="NotReady", unschedulable=True)],
        [replica("shop-api-0", "Running", "n1"), waiting],
        revision=10,
    )
    text = render(status_view(status))
    assert "leader: a (this server)" in text
    assert "nodes: 1/2 ready, 1 cordoned" in text
    assert "replicas: 2 (Pending 1, Running 1)" in text
    assert any(line.split()[:2] == ["shop-api-1", "Unschedulable"] for line in text.splitlines())

    placed = replica("shop-api-1", "Scheduled", "n1")
    status.apply_event("put", {"kind": "Replica", "name": "shop-api-1", "revision": 12, "object": placed})
    status.apply_event("delete", {"kind": "Node", "name": "n2", "revision": 13})
    status.apply_event("put", {"kind": "Queue", "name": "q", "revision": 14, "object": {}})
    text = render(status_view(status))
    assert "nodes: 1/1 ready" in text
    assert "replicas: 2 (Scheduled 1, Running 1)" in text
    assert "PENDING" not in text
    assert status.revision == 14


def test_why_of_a_placed_replica_shows_its_node_against_the_runner_up() -> None:
    why = {
        "replica": "web-0",
        "phase": "Running",
        "node_ref": "n1",
        "placement": {
            "node": "n1",
            "computed": "now",
            "scores": {"node": "n1", "total": 80, "scores": {"least_allocated": 80}},
            "runner_up": {"node": "n2", "total": 60.5, "scores": {"least_allocated": 60.5}},
            "margin": 19.5,
        },
    }
    text = render(explanation_view(why, NOW))
    assert "why n1 (ranked as the cluster is now):" in text
    assert "n1 scores 80 of 100, n2 (the runner-up) 60.5: a margin of 19.5" in text
    lines = [line.split() for line in text.splitlines()]
    assert ["1", "n1", "80", "80"] in lines and ["2", "n2", "60.5", "60.5"] in lines


def test_why_says_what_keeps_a_replica_on_its_node_and_nothing_when_nothing_does() -> None:
    sticky = {
        "node": "n1",
        "because": ["previous node", "holds volume type=ssd 10Gi"],
        "message": "kept on node n1: previous node / holds volume type=ssd 10Gi",
    }
    kept = {"replica": "db-pg-0", "phase": "Running", "node_ref": "n1", "sticky": sticky}
    assert "stickiness: kept on node n1: previous node / holds volume type=ssd" in render(
        explanation_view(kept, NOW)
    )
    assert "stickiness" not in render(explanation_view(WHY_PENDING, NOW))
