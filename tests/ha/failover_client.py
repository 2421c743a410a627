"""A client that sends each write to whichever server leads, the way a careful API user does.

It starts with the server it last saw leading. A ``503 not_leader`` names the leader's URL: it goes
there. A server that cannot be reached (killed, paused, restarting) or answers ``503 unavailable``
is left for the next one in the list. A request whose answer was lost is sent again: apply is
idempotent (the second time it says ``unchanged``), so a retry can never store a thing twice.

Every outcome is recorded, so a test can tell an apply that was acknowledged (2xx: must never be
lost) from one that was only ever retried. Any other status is a failure of the test at once.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.ha.servers import HaServer

RETRY_PAUSE_S = 0.05
# Long enough for a busy leader's apply; short enough that a paused server costs the client little.
REQUEST_TIMEOUT = httpx.Timeout(5.0, connect=1.0)


@dataclass
class WriteLog:
    """Shared by the client threads of one test."""

    acknowledged: dict[str, str] = field(default_factory=dict)  # object name -> server name that said 2xx
    refusals: Counter[str] = field(default_factory=Counter)  # "not_leader", "unavailable", "unreachable"
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, what: str) -> None:
        with self.lock:
            self.refusals[what] += 1

    def acknowledge(self, name: str, server: HaServer) -> None:
        with self.lock:
            self.acknowledged[name] = server.name


class FailoverClient:
    def __init__(self, servers: Sequence[HaServer], token: str, log: WriteLog, deadline_s: float) -> None:
        self._servers = list(servers)
        self._by_url = {server.url: server for server in self._servers}
        # Start with a server that answers: one this test froze would cost a whole request timeout.
        self._current = next((i for i, server in enumerate(self._servers) if server.answers), 0)
        self._log = log
        self._deadline_s = deadline_s
        self._http = httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=REQUEST_TIMEOUT)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> FailoverClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def post(self, path: str, body: Any, name: str) -> dict[str, Any]:
        """POST until some server accepts it (2xx); AssertionError on a refusal or after the deadline."""
        give_up_at = time.monotonic() + self._deadline_s
        history: list[str] = []
        while time.monotonic() < give_up_at:
            server = self._servers[self._current]
            try:
                response = self._http.post(f"{server.url}{path}", json=body)
            except httpx.TransportError as error:
                self._log.count("unreachable")
                history.append(f"{server.name}: {type(error).__name__}")
                self._next_server()
                continue
            if response.is_success:
                self._log.acknowledge(name, server)
                return dict(response.json())
            error_code = response.json().get("error") if response.status_code == 503 else None
            if error_code not in ("not_leader", "unavailable"):
                raise AssertionError(f"{server.name} refused {name}: {response.status_code} {response.text}")
            self._log.count(error_code)
            history.append(f"{server.name}: {error_code}")
            leader_url = response.json().get("leader_url")
            if error_code == "not_leader" and leader_url in self._by_url and leader_url != server.url:
                self._current = self._servers.index(self._by_url[leader_url])
                time.sleep(RETRY_PAUSE_S)  # the two may disagree for a moment: no ping-pong at full speed
            else:
                self._next_server()
        raise AssertionError(f"{name}: no server accepted it within {self._deadline_s:g}s: {history[-12:]}")

    def _next_server(self) -> None:
        self._current = (self._current + 1) % len(self._servers)
        time.sleep(RETRY_PAUSE_S)
