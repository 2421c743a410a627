"""The replica page's node-loss section in a real browser: a replica the node-loss policy returned to
Pending (its node's agent stopped; no other node to go to) shows its lost node's timeline, as ``why`` has
it. A server of its own: node loss needs short timings (NotReady after 5 s, probed 1 s later)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

from tests.dashboard.browser import Dashboard, chromium_path
from tests.e2e.processes import Server, start_agent, wait_for

LOST = "lossui-01"
DATABASE = """\
api_version: loadmaster/v1
kind: Deployment
metadata: {name: db}
spec:
  services: [{name: pg, image: "pg:16", replicas: 1, resources: {cpu: 500m, memory: 256Mi}}]
"""
SERVER_OPTIONS = (
    "--not-ready-after-s",
    "5",
    "--node-loss-wait-s",
    "1",
    "--node-loss-policy",
    "single_replica",
)


@pytest.fixture
def dashboard(tmp_path: Path) -> Iterator[Dashboard]:
    server = Server(tmp_path / "data", options=SERVER_OPTIONS).start()
    agent = start_agent(server, 1, "cpu=4,memory=8Gi", "lossui", tmp_path, heartbeat="1s")
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
            try:
                yield Dashboard(server, agent, browser)
            finally:
                browser.close()
    finally:
        if agent.alive():
            agent.stop()
        server.stop()


def why(server: Server, name: str) -> dict[str, Any]:
    with server.client() as client:
        return dict(client.get(f"/api/replicas/{name}/why").raise_for_status().json())


def test_a_replica_returned_to_pending_by_node_loss_shows_its_lost_node_s_timeline(
    dashboard: Dashboard,
) -> None:
    server = dashboard.server
    with server.client() as client:
        wait_for(lambda: client.get(f"/api/nodes/{LOST}").status_code == 200, f"{LOST} registered")
        client.post(
            "/api/apply", content=DATABASE, headers={"Content-Type": "application/yaml"}
        ).raise_for_status()

        def running() -> bool:
            status = client.get("/api/replicas/db-pg-0").json().get("status", {})
            return status.get("phase") == "Running" and status.get("node_ref") == LOST

        wait_for(running, f"db-pg-0 Running on {LOST}")
    page = dashboard.page("/ui/replicas/db-pg-0")
    page.wait_for_selector("dd.phase-Running")
    assert "Node-loss timeline" not in page.inner_text("main")  # its node is Ready

    assert dashboard.agent.stop() == 0, dashboard.agent.log()
    # the policy returns it to Pending once the node is lost; the timeline is then final (nothing next)
    lost = wait_for(
        lambda: (
            (answer := why(server, "db-pg-0")).get("node_loss", {}).get("lost_at") and answer["node_loss"]
        ),
        "db-pg-0 returned to Pending with its lost node's timeline",
    )
    heading = f"h2:has-text('Node-loss timeline of {LOST} (policy single_replica)')"
    page.wait_for_selector(heading)
    page.wait_for_selector("dd.phase-Pending")
    steps = page.locator(f"{heading} + .table-wrap tbody tr")

    def shown() -> list[str]:
        return [steps.nth(i).inner_text().replace("\t", " ") for i in range(steps.count())]

    wait_for(lambda: len(shown()) == len(lost["steps"]), "every step of the timeline")
    assert shown() == [f"{step['at']} {step['what']}" for step in lost["steps"]]
    assert any("db-pg-0" in line for line in shown())  # the step that moved it names it
    page.click(f"{heading} a")  # the lost node links to its page, which shows the same timeline
    page.wait_for_selector(f"h1:has-text('Node {LOST}')")
    page.wait_for_selector(heading)
    assert dashboard.problems == []
