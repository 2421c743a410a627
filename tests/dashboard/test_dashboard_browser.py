"""The dashboard in a real headless browser (Debian's Chromium driven by Playwright) against a real server
on 127.0.0.1 with simulated nodes running examples/: pages render what the API holds, deep links work, a
pending replica shows its reasons, a cordon shows within 2 s, and nothing is logged to the console."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, sync_playwright

from tests.dashboard.browser import Dashboard, chromium_path
from tests.e2e.processes import Server, start_agent, wait_for

ROOT = Path(__file__).resolve().parents[2]
NODES = ("ui-01", "ui-02", "ui-03")
TOO_BIG = """
api_version: loadmaster/v1
kind: Deployment
metadata: {name: huge}
spec:
  services:
    - {name: api, image: "huge:1", command: [sleep, "1"], replicas: 1, resources: {cpu: "64", memory: 1Gi}}
"""


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    chromium = chromium_path()
    data_dir = tmp_path_factory.mktemp("ui") / "data"
    server = Server(data_dir).start()
    agent = start_agent(server, len(NODES), "cpu=8,memory=32Gi,gpu=2", "ui", data_dir.parent)
    with server.client() as client:
        wait_for(lambda: len(client.get("/api/nodes").json()["items"]) == len(NODES), "the simulated nodes")
        documents = "\n---\n".join(p.read_text() for p in sorted((ROOT / "examples").glob("*.yaml")))
        answer = client.post(
            "/api/apply", content=f"{documents}\n---\n{TOO_BIG}", headers={"Content-Type": "application/yaml"}
        )
        answer.raise_for_status()

        def running() -> bool:
            return any(
                r["status"].get("phase") == "Running" for r in client.get("/api/replicas").json()["items"]
            )

        wait_for(running, "a running replica")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            yield Dashboard(server, agent, browser)
        finally:
            browser.close()
            agent.stop()
            server.stop()


def test_the_overview_shows_the_nodes_and_replicas_and_drops_the_token_from_the_address(
    dashboard: Dashboard,
) -> None:
    page = dashboard.page("/ui/")
    page.wait_for_selector("#utilisation")
    page.wait_for_selector("text=3 / 3")  # selectors, not wait_for_function: the page's CSP forbids eval
    assert "token=" not in page.url
    text = page.inner_text("main")
    assert "nodes ready / total" in text and "Running" in text
    assert dashboard.problems == []


def test_every_page_has_its_own_address(dashboard: Dashboard) -> None:
    page = dashboard.page("/ui/nodes/ui-01")
    page.wait_for_selector("text=Node ui-01")
    page.wait_for_selector("text=Conditions (oldest first)")
    page.goto(f"{dashboard.server.url}/ui/queues")  # the token stays in this tab's session storage
    page.wait_for_selector("h1:has-text('Queues')")
    page.wait_for_selector("td:has-text('team-a')")
    page.click("nav >> text=Deployments & jobs")
    page.wait_for_selector("td:has-text('shop')")
    assert page.url.endswith("/ui/workloads")
    page.click("nav >> text=Audit")
    page.wait_for_selector("td:has-text('apply')")
    assert dashboard.problems == []


def test_a_pending_replica_shows_why_it_waits(dashboard: Dashboard) -> None:
    page = dashboard.page("/ui/replicas/huge-api-0")
    page.wait_for_selector("h1:has-text('Replica huge-api-0')")
    page.wait_for_selector("td.phase-Pending, dd.phase-Pending")
    page.wait_for_selector("#why-reason:not(:empty)")
    reasons = page.inner_text("main")
    assert "Rejected nodes by category" in reasons
    assert all(node in reasons for node in NODES)  # every node's reason is listed
    assert dashboard.problems == []


def test_a_cordon_shows_on_the_nodes_page_within_two_seconds(dashboard: Dashboard) -> None:
    page = dashboard.page("/ui/nodes")
    row = "tr[data-node='ui-02']"
    page.wait_for_selector(row)
    assert "cordoned" not in page.inner_text(row)
    with dashboard.server.client() as client:
        client.post("/api/nodes/ui-02/cordon").raise_for_status()
    started = time.monotonic()
    page.wait_for_selector(f"{row} >> text=cordoned", timeout=2000)
    assert time.monotonic() - started < 2.0
    with dashboard.server.client() as client:
        client.post("/api/nodes/ui-02/uncordon").raise_for_status()
    assert dashboard.problems == []


def test_without_a_token_the_page_asks_for_one_and_refuses_a_wrong_one(dashboard: Dashboard) -> None:
    page = dashboard.browser.new_page()
    page.goto(f"{dashboard.server.url}/ui/nodes")
    page.wait_for_selector("dialog#signin[open]")
    page.fill("#token-input", "not-a-token")
    page.click("dialog button")
    page.wait_for_selector("#signin-error:has-text('not accepted')")
    page.fill("#token-input", dashboard.server.token)
    page.click("dialog button")
    page.wait_for_selector("tr[data-node='ui-01']")


def test_the_page_works_on_a_phone_sized_screen(dashboard: Dashboard) -> None:
    page = dashboard.browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(f"{dashboard.server.url}/ui/nodes#token={dashboard.server.token}")
    page.wait_for_selector("tr[data-node='ui-01']")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390  # no sideways scrolling of the page (wide tables scroll inside their box)


def gpu_views(server: Server) -> dict[str, Any]:
    with server.client() as client:
        return {
            n["metadata"]["name"]: n["status"].get("gpu") for n in client.get("/api/nodes").json()["items"]
        }


def shown_devices(page: Page) -> list[tuple[str, str]]:
    """The node page's device table: (device, its holders as shown)."""
    rows = page.locator("tr[data-device]")
    return [
        (rows.nth(i).locator("td").nth(0).inner_text(), rows.nth(i).locator("td").nth(3).inner_text())
        for i in range(rows.count())
    ]


def test_the_gpu_devices_their_holders_and_fragmentation_show_on_the_nodes_and_node_pages(
    dashboard: Dashboard,
) -> None:
    def node_holding_a_gpu() -> str | None:
        views = gpu_views(dashboard.server)
        held = [
            name
            for name, view in sorted(views.items())
            if view and any(d["replicas"] for d in view["devices"])
        ]
        return held[0] if held else None

    name = wait_for(node_holding_a_gpu, "a replica of train-resnet holding a GPU device")
    nodes = dashboard.page("/ui/nodes")
    row = f"tr[data-node='{name}']"
    nodes.wait_for_selector(f"{row} .gpu-devices progress")
    assert nodes.locator(f"{row} .gpu-devices progress").count() == 2  # the agent's nodes have 2 GPUs each
    assert " GPU / " in nodes.inner_text(f"{row} .gpu-shape")  # largest request / fragmented, in GPUs

    page = dashboard.page(f"/ui/nodes/{name}")
    page.wait_for_selector("#gpu-figures")

    def page_agrees_with_the_api() -> bool:
        view = gpu_views(dashboard.server)[name]
        expected = [(str(d["index"]), ", ".join(d["replicas"]) or "free") for d in view["devices"]]
        figures = page.inner_text("#gpu-figures")
        shape = f"{view['largest_schedulable']:g} GPU" in figures and f"{view['fragmented']:g} GPU" in figures
        return shown_devices(page) == expected and shape

    wait_for(page_agrees_with_the_api, "the node page's devices and figures as GET /api/nodes has them")
    assert any("train-resnet" in holders for _, holders in shown_devices(page))
    page.click("tr[data-device] a")  # a holder links to its replica's page
    page.wait_for_selector("h1:has-text('Replica train-resnet')")
    assert dashboard.problems == []


def test_a_node_page_shows_each_device_s_model(dashboard: Dashboard) -> None:
    node = "api_version: loadmaster/v1\nkind: Node\nmetadata: {name: ui-a100}\n"
    node += "spec: {capacity: {cpu: 8, memory: 8Gi, gpu: 4}, gpu_model: A100}\n"
    with dashboard.server.client() as client:
        client.post(
            "/api/apply", content=node, headers={"Content-Type": "application/yaml"}
        ).raise_for_status()
    try:
        page = dashboard.page("/ui/nodes/ui-a100")
        page.wait_for_selector("tr[data-device='3']")
        assert shown_devices(page) == [(str(d), "free") for d in range(4)]
        models = page.locator("tr[data-device] td:nth-child(2)")
        assert [models.nth(i).inner_text() for i in range(4)] == ["A100"] * 4
        # never heartbeated, so NotReady: the largest request it could take now is none
        assert page.inner_text("#gpu-figures dd >> nth=0") == "0 GPU"
        assert dashboard.problems == []
    finally:
        with dashboard.server.client() as client:
            client.delete("/api/nodes/ui-a100").raise_for_status()
