"""A dashboard page in a real headless browser (Debian's Chromium driven by Playwright) against a real
server: signed in through ``#token=``, with every console error or warning and page error collected."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field

from playwright.sync_api import Browser, ConsoleMessage, Page

from tests.e2e.processes import Process, Server


def chromium_path() -> str:
    chromium = shutil.which("chromium")
    assert chromium, "chromium is not installed (scripts/install-chromium installs it)"
    return chromium


@dataclass
class Dashboard:
    server: Server
    agent: Process
    browser: Browser
    problems: list[str] = field(default_factory=list)

    def page(self, path: str) -> Page:
        page = self.browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.goto(f"{self.server.url}{path}#token={self.server.token}")
        return page

    def _console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            self.problems.append(f"console {message.type}: {message.text}")
