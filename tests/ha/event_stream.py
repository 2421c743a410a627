"""A ``GET /api/watch`` stream read by a background thread, to check afterwards that it missed nothing.

Every ``put``/``delete`` is kept as ``(name, revision)`` with the object's phase; any other event
(``error``, ``relist``) is kept too, so a test can assert the stream never broke off or skipped ahead.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import httpx
from httpx_sse import EventSource

from tests.ha.servers import HaServer


@dataclass
class SeenEvent:
    kind: str  # put | delete
    name: str
    revision: int
    phase: str | None


@dataclass
class EventStream:
    server: HaServer
    token: str
    from_revision: int
    events: list[SeenEvent] = field(default_factory=list)
    other: list[tuple[str, Any]] = field(default_factory=list)  # (event type, data) of anything else
    error: BaseException | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _opened: threading.Event = field(default_factory=threading.Event)

    def start(self) -> EventStream:
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        if not self._opened.wait(10):
            raise AssertionError(f"the watch stream of {self.server.name} did not open: {self.error!r}")
        return self

    def _read(self) -> None:
        params = {"kinds": "replicas", "from_revision": str(self.from_revision)}
        headers = {"Authorization": f"Bearer {self.token}"}
        timeout = httpx.Timeout(10.0, read=None)  # quiet is fine; the test decides when to stop
        try:
            with httpx.stream("GET", f"{self.server.url}/api/watch", params=params, headers=headers,
                              timeout=timeout) as response:  # fmt: skip
                response.raise_for_status()
                self._opened.set()
                for event in EventSource(response).iter_sse():
                    if self._stop.is_set():
                        return
                    data = event.json()
                    if event.event in ("put", "delete"):
                        phase = ((data.get("object") or {}).get("status") or {}).get("phase")
                        self.events.append(SeenEvent(event.event, data["name"], data["revision"], phase))
                    else:
                        self.other.append((event.event, data))
        except BaseException as error:  # kept for the test's assertions, not swallowed
            self.error = error
            self._opened.set()

    def stop(self) -> None:
        """Stop reading (the thread ends at the next line the server sends, or with the server)."""
        self._stop.set()

    def seen(self) -> set[tuple[str, int]]:
        return {(event.name, event.revision) for event in self.events}
