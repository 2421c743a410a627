"""The response of a live ``GET /api/watch``: a watcher of the server's one watch broadcast
(``runtime/requests/reads/watch_broadcast.py``) whose bytes go straight to the client's connection.

The route joins the broadcast first (so a change made once the client has its 200 is in its stream)
with a ``ConnectionSink`` that is not attached yet: nothing is written to it until the response has
sent its head and ``: stream open`` through ASGI, then taken the body over (``direct_body.py``); what
changed meanwhile is written at once then. The stream ends when the broadcast ends it (too slow, store
failed: its ``event: error`` first; server closing) or the client goes; the slot is given back then.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from loadmaster.api.direct_body import DIRECT_BODY, DirectBody
from loadmaster.api.sse import notice_block
from loadmaster.runtime.requests.reads.event_feed import FeedFailed
from loadmaster.runtime.requests.reads.watch_broadcast import Dropped, Watcher

STREAM_OPEN = b": stream open\n\n"
KEEPALIVE = b": keepalive\n\n"


class ConnectionSink:
    """A watcher's ``WatchSink``: its client's connection, once ``attach`` gave it one."""

    def __init__(self) -> None:
        self._body: DirectBody | None = None
        self.ended: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

    def unsent_bytes(self) -> int:
        # Not attached: the head is not sent yet, so nothing may be written (the watcher waits).
        return 1 if self._body is None else self._body.unsent_bytes()

    def write(self, data: bytes) -> None:
        assert self._body is not None  # unsent_bytes() kept the broadcast from writing before
        self._body.write(data)

    def keep_alive(self) -> None:
        self.write(KEEPALIVE)

    def end(self, notice: FeedFailed | Dropped | None) -> None:
        last = b"" if notice is None else notice_block(notice)
        if self._body is not None and last:
            self._body.write(last)
            last = b""
        if not self.ended.done():
            self.ended.set_result(last)  # what the response still has to send, if not attached

    def attach(self, body: DirectBody, watcher: Watcher) -> None:
        body.on_drained = watcher.drained
        body.on_lost = self._lost
        self._body = body
        watcher.drained()  # what changed since the watcher joined

    def detach(self) -> None:
        if self._body is not None:
            self._body.close()
            self._body = None

    def _lost(self) -> None:
        if not self.ended.done():
            self.ended.set_result(b"")


class WatchStream(Response):
    """The response of one live watch."""

    media_type = "text/event-stream"

    def __init__(
        self,
        watcher: Watcher,
        sink: ConnectionSink,
        give_back: Callable[[], None],
        headers: Mapping[str, str],
    ) -> None:
        # As StreamingResponse does: no body, so no Content-Length (h11 frames it in chunks).
        self.status_code = 200
        self.background = None
        self.init_headers(headers)
        self._watcher, self._sink, self._give_back = watcher, sink, give_back

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            await send({"type": "http.response.body", "body": STREAM_OPEN, "more_body": True})
            if not self._sink.ended.done():
                open_direct_body: Callable[[], DirectBody] = scope["extensions"][DIRECT_BODY]
                self._sink.attach(open_direct_body(), self._watcher)
            try:
                last = await self._sink.ended
            finally:
                self._sink.detach()
            await send({"type": "http.response.body", "body": last, "more_body": False})
        finally:
            self._watcher.leave()
            self._give_back()
