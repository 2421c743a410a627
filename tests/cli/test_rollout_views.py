"""``status -w`` lists rollouts live from deployment watch events; ``describe deployment`` shows the
revisions kept and the rollout line (and not the kept specs)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from loadmaster.cli.views.describe import describe_view
from loadmaster.cli.views.status import status_view
from loadmaster.cli.views.status_state import ClusterStatus
from tests.cli.views import render

STEP_2 = {
    "revision": 3, "from_revision": 2, "total_steps": 4, "current_step": 2, "state": "in_progress",
    "failure_reason": None, "step_replica": "shop-api-1",
}  # fmt: skip


def _deployment(rollout: dict[str, Any] | None) -> dict[str, Any]:
    spec = {"services": [{"name": "api", "image": "shop:3", "replicas": 4}]}
    return {
        "kind": "Deployment",
        "metadata": {"name": "shop", "created_at": "2026-11-21T10:00:00Z", "revision": 9},
        "spec": spec,
        "status": {
            "applied_revision": 3,
            "previous_revision": 2,
            "revisions": [{"revision": n, "spec": spec, "spec_hashes": {}} for n in (1, 2, 3)],
            "rollout": rollout,
        },
    }


def test_status_shows_a_rollout_in_progress_and_follows_its_steps() -> None:
    status = ClusterStatus(server="http://127.0.0.1:7480")
    status.apply_event(
        "put", {"kind": "Deployment", "name": "shop", "revision": 5, "object": _deployment(STEP_2)}
    )
    text = render(status_view(status))
    assert "in_progress: step 2/4 to revision 3 (from 2), replacing shop-api-1" in text
    done = {**STEP_2, "state": "completed", "current_step": 4, "step_replica": None}
    status.apply_event(
        "put", {"kind": "Deployment", "name": "shop", "revision": 6, "object": _deployment(done)}
    )
    assert "ROLLOUT" not in render(status_view(status))  # a completed rollout needs no attention
    aborted = {**STEP_2, "state": "aborted", "failure_reason": "step_timeout"}
    status.apply_event(
        "put", {"kind": "Deployment", "name": "shop", "revision": 7, "object": _deployment(aborted)}
    )
    assert "aborted: step 2/4 to revision 3 (from 2), step_timeout" in render(status_view(status))


def test_describe_deployment_shows_revisions_and_the_rollout_not_the_kept_specs() -> None:
    text = render(describe_view(_deployment(STEP_2), datetime(2026, 11, 21, 11, tzinfo=UTC)))
    assert "Revisions:  3 (previous 2; kept 1, 2, 3)" in text
    assert "Rollout:    in_progress: step 2/4 to revision 3 (from 2), replacing shop-api-1" in text
    assert text.count("shop:3") == 1  # the spec once; the kept revisions are not dumped
    never = render(describe_view(_deployment(None), datetime(2026, 11, 21, 11, tzinfo=UTC)))
    assert "Rollout:    -" in never
