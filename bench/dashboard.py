"""Dashboard figures (issue 21), in headless Chromium driven by Playwright. Prints JSON; not a test.

* ``first_paint``: a server on SQLite with N simulated nodes and M replicas (default 1,000 and 10,000):
  seconds from opening ``/ui/`` to the overview showing every node Ready and every replica, and to the
  nodes page listing every node.
* ``follow``: the replicas grow by ``--rate`` per second for ``--seconds`` seconds; how long after the last
  change the overview shows the final count (a page that falls behind shows a growing lag).
* ``--screenshots DIR``: a PNG of each page over examples/ on three nodes (docs/dashboard/).

    .venv/bin/python bench/dashboard.py [--nodes 1000] [--replicas 10000] [--screenshots docs/dashboard]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Browser, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("", "nodes", "nodes/sim-01", "queues", "workloads", "replicas", "replicas/huge-api-0", "audit")
SCREENSHOT_CAPACITY = "cpu=64,memory=256Gi,gpu=8"  # GPUs, so the nodes pages show devices and fragments


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(check: Callable[[], bool], what: str, timeout_s: float = 600.0) -> float:
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > timeout_s:
            raise TimeoutError(what)
        time.sleep(0.1)
    return time.monotonic() - started


@contextmanager
def cluster(nodes: int, capacity: str = "cpu=64,memory=256Gi") -> Iterator[tuple[str, str, httpx.Client]]:
    """A server on SQLite and ``nodes`` simulated nodes; yields (url, admin token, client)."""
    data = Path(tempfile.mkdtemp(prefix="lm-dashboard-"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    loadmaster = [sys.executable, "-m", "loadmaster"]
    log = open(data / "log", "w")  # noqa: SIM115 (closed below)
    server = subprocess.Popen(
        [*loadmaster, "server", "--data-dir", str(data / "d"), "--listen", f"127.0.0.1:{port}"],
        stdout=log,
        stderr=log,
    )
    agent = None
    try:
        wait_for((data / "d" / "admin-token").exists, "the server")
        token = (data / "d" / "admin-token").read_text().strip()
        env = {**os.environ, "LOADMASTER_TOKEN": token}
        agent = subprocess.Popen(
            [
                *loadmaster,
                "agent",
                "--simulate",
                "--count",
                str(nodes),
                "--capacity",
                capacity,
                "--name-prefix",
                "sim",
                "--server",
                url,
            ],
            stdout=log,
            stderr=log,
            env=env,
        )
        client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120)
        wait_for(lambda: len(client.get("/api/nodes").json()["items"]) >= nodes, "the nodes")
        yield url, token, client
    except Exception:
        log.flush()
        print((data / "log").read_text()[-3000:], file=sys.stderr)  # what the server and agent said
        raise
    finally:
        for process in (agent, server):
            if process is not None:
                process.terminate()
                process.wait(30)
        log.close()
        shutil.rmtree(data, ignore_errors=True)


def deployment(replicas: int, services: int = 10) -> str:
    per = replicas // services
    lines = [
        "api_version: loadmaster/v1",
        "kind: Deployment",
        "metadata: {name: load}",
        "spec:",
        "  services:",
    ]
    for i in range(services):
        lines.append(
            f"    - {{name: s{i}, image: 'app:1', command: [sleep, '1'], replicas: {per}, "
            "resources: {cpu: 100m, memory: 64Mi}}"
        )
    return "\n".join(lines) + "\n"


def apply(client: httpx.Client, text: str) -> None:
    client.post("/api/apply", content=text, headers={"Content-Type": "application/yaml"}).raise_for_status()


def placed(client: httpx.Client) -> int:
    items = client.get("/api/replicas").json()["items"]
    return sum(item["status"].get("phase") in ("Scheduled", "Running") for item in items)


def first_paint(browser: Browser, nodes: int, replicas: int, rate: int, seconds: int) -> dict[str, Any]:
    with cluster(nodes) as (url, token, client):
        apply(client, deployment(replicas))
        wait_for(lambda: placed(client) >= replicas, "every replica placed")
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        started = time.monotonic()
        page.goto(f"{url}/ui/#token={token}")
        # selectors, not wait_for_function: the page's Content-Security-Policy forbids eval
        page.wait_for_selector(f"text={nodes} / {nodes}", timeout=120_000)
        page.wait_for_selector(f".card .value >> text='{replicas}'", timeout=120_000)
        overview_s = time.monotonic() - started
        started = time.monotonic()
        page.goto(f"{url}/ui/nodes")
        page.locator("tr[data-node]").nth(nodes - 1).wait_for(timeout=120_000)
        nodes_page_s = time.monotonic() - started
        total = replicas
        page.click("nav >> text=Overview")  # client-side: the page stays open and follows the watch stream
        page.wait_for_selector(f".card .value >> text='{replicas}'", timeout=120_000)
        for _ in range(seconds):  # grow by `rate` replicas a second (10 services, rate/10 each)
            total += rate
            apply(client, deployment(total))
            time.sleep(1.0)
        started = time.monotonic()
        page.wait_for_selector(f".card .value >> text='{total}'", timeout=300_000)
        lag_s = time.monotonic() - started
        return {
            "nodes": nodes,
            "replicas": replicas,
            "overview_first_paint_s": round(overview_s, 2),
            "nodes_page_s": round(nodes_page_s, 2),
            "follow": {
                "rate_per_s": rate,
                "seconds": seconds,
                "final_replicas": total,
                "shown_after_last_change_s": round(lag_s, 2),
            },
        }


def screenshots(browser: Browser, out: Path) -> list[str]:
    huge = (
        "api_version: loadmaster/v1\nkind: Deployment\nmetadata: {name: huge}\nspec:\n  services:\n"
        "    - {name: api, image: 'huge:1', command: [sleep, '1'], replicas: 1,"
        " resources: {cpu: '512', memory: 1Gi}}\n"
    )
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with cluster(3, SCREENSHOT_CAPACITY) as (url, token, client):
        examples = "\n---\n".join(p.read_text() for p in sorted((ROOT / "examples").glob("*.yaml")))
        apply(client, f"{examples}\n---\n{huge}")
        wait_for(lambda: placed(client) >= 3, "examples placed")
        time.sleep(2)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{url}/ui/#token={token}")
        for path in PAGES:
            page.goto(f"{url}/ui/{path}")
            page.wait_for_selector("main h1")
            time.sleep(1.0)  # the live data and the explanation arrive
            name = (path or "overview").replace("/", "-")
            page.screenshot(path=str(out / f"{name}.png"), full_page=True)
            written.append(str(out / f"{name}.png"))
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--replicas", type=int, default=10_000)
    parser.add_argument("--rate", type=int, default=100)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--screenshots", type=Path)
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    assert chromium, "chromium is not installed (scripts/install-chromium)"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            if args.screenshots:
                print(json.dumps({"screenshots": screenshots(browser, args.screenshots)}, indent=1))
            else:
                print(
                    json.dumps(
                        first_paint(browser, args.nodes, args.replicas, args.rate, args.seconds), indent=1
                    )
                )
        finally:
            browser.close()


if __name__ == "__main__":
    main()
