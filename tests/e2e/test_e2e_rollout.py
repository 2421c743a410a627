"""Rolling updates end to end: a real server on SQLite and a simulated agent, driven through the CLI.

apply (revision 1), apply a new image (rolled step by step to completion), rollback (rolled back), an
apply that cannot run (its first step times out: aborted, the last good revision keeps serving), a
rollback after the abort, and the refusal: rollback of a deployment with no previous revision names
``previous_revision``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Cluster, write
from tests.e2e.processes import wait_for

NAME = "roller"


def manifest(image: str, cpu: str = "250m") -> str:
    return f"""\
api_version: loadmaster/v1
kind: Deployment
metadata: {{name: {NAME}}}
spec:
  services:
    - {{name: api, image: "{image}", replicas: 3, resources: {{cpu: "{cpu}", memory: 64Mi}},
       rollout: {{step_timeout: 3s}}}}
"""


def deployment(cluster: Cluster) -> dict[str, Any]:
    with cluster.server.client() as client:
        found: dict[str, Any] = client.get(f"/api/deployments/{NAME}").raise_for_status().json()
    return found


def images(cluster: Cluster) -> dict[str, str]:
    """Running replicas of the service by name -> image (replacements in flight left out)."""
    with cluster.server.client() as client:
        items = client.get("/api/replicas").raise_for_status().json()["items"]
    return {
        r["metadata"]["name"]: r["spec"]["image"]
        for r in items
        if r["spec"].get("owner") == NAME
        and not r["metadata"]["name"].endswith(".next")
        and r["status"].get("phase") == "Running"
    }


def rollout(cluster: Cluster) -> dict[str, Any]:
    found: dict[str, Any] = deployment(cluster).get("status", {}).get("rollout") or {}
    return found


def settled_on(cluster: Cluster, image: str, state: str, revision: int) -> bool:
    plan = rollout(cluster)
    running = images(cluster)
    return (
        plan.get("state") == state
        and plan.get("revision") == revision
        and len(running) == 3
        and set(running.values()) == {image}
    )


def test_apply_roll_abort_and_rollback_through_the_cli(cluster: Cluster, tmp_path: Path) -> None:
    def apply(image: str, cpu: str = "250m") -> None:
        applied = cluster.cli("apply", "-f", str(write(tmp_path / f"{image}.yaml", manifest(image, cpu))))
        assert applied.exit_code == 0, applied.output

    apply("roll:1")
    wait_for(lambda: len(images(cluster)) == 3, "three replicas of roll:1 Running")
    refused = cluster.cli("rollback", NAME)
    assert refused.exit_code != 0
    assert "previous_revision" in refused.output
    assert deployment(cluster)["status"]["applied_revision"] == 1  # nothing stored

    apply("roll:2")
    wait_for(lambda: settled_on(cluster, "roll:2", "completed", 2), "the rollout to roll:2 completed")
    assert rollout(cluster)["total_steps"] == 3
    assert set(images(cluster)) == {f"{NAME}-api-{i}" for i in range(3)}  # names kept

    rolled_back = cluster.cli("rollback", NAME)
    assert rolled_back.exit_code == 0, rolled_back.output
    assert "revision 1" in rolled_back.stdout
    wait_for(lambda: settled_on(cluster, "roll:1", "completed", 3), "the rollback to roll:1 rolled out")

    apply("roll:3", cpu="64")  # no node has 64 cpus: step 1's replacement never runs
    wait_for(lambda: settled_on(cluster, "roll:1", "aborted", 4), "the rollout to roll:3 aborted")
    plan = rollout(cluster)
    assert (plan["failure_reason"], plan["current_step"], plan["from_revision"]) == ("step_timeout", 1, 3)

    described = cluster.cli("describe", "deployment", NAME)
    assert described.exit_code == 0, described.output
    assert "aborted: step 1/3 to revision 4 (from 3)" in described.stdout

    audit = cluster.cli("audit", "--type", "rollout_started,rollout_completed,rollout_aborted", "-o", "json")
    assert audit.exit_code == 0, audit.output
    entries = json.loads(audit.stdout)
    kinds = [
        e["type"]
        for e in (entries["items"] if isinstance(entries, dict) else entries)
        if e["object"] == f"deployments/{NAME}"
    ]
    roll = ["rollout_started", "rollout_completed"]
    assert kinds == [*roll, *roll, "rollout_started", "rollout_aborted"]

    # Rolling back the aborted revision goes to what the replicas run: a new plan done in 0 steps.
    after_abort = cluster.cli("rollback", NAME)
    assert after_abort.exit_code == 0, after_abort.output
    wait_for(lambda: settled_on(cluster, "roll:1", "completed", 5), "the rollback after the abort settled")
    assert rollout(cluster)["total_steps"] == 0
