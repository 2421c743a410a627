"""``HttpLimits``: how much of the server one client, or all of them together, may hold (docs/api.md).

An unauthenticated or slow client must not tie up memory, connections or the event loop: a request's
head (request line and headers) must arrive within ``header_timeout_s`` of the connection opening (or of
the previous response), its body within ``body_timeout_s`` of the head; beyond ``max_connections`` a
request is answered 503. Watch streams are capped in total and per token, and a watcher that leaves
``watch_buffer_events`` changes undelivered is dropped (it is told so, then the stream ends).
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True, slots=True)
class HttpLimits:
    # Long enough for any client on a real network; short enough that a slow-loris holds little.
    header_timeout_s: float = 10.0
    # An 8 MiB apply body needs ~2.2 Mbit/s to arrive in time.
    body_timeout_s: float = 30.0
    # uvicorn's own idle limit between requests on a kept-alive connection.
    keep_alive_s: int = 5
    # Well under the usual 20,000+ open-files limit of a server process; each connection is one file.
    max_connections: int = 4096
    max_watch_streams: int = 2048
    # Agents share a token and each follows one stream, so this bounds an abuser, not a fleet.
    max_watch_streams_per_token: int = 1024
    # ~1,000 changes is a large rollout's worth; a watcher that far behind is reading too slowly.
    watch_buffer_events: int = 1000

    def problems(self) -> list[str]:
        """Each setting that cannot work, as ``name: must be > 0, got value``."""
        return [
            f"{f.name}: must be > 0, got {getattr(self, f.name)}"
            for f in fields(self)
            if not getattr(self, f.name) > 0
        ]
