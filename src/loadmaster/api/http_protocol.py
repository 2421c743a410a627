"""uvicorn's HTTP/1.1 protocol (h11) with the connection limits uvicorn lacks (runtime/http_limits.py).

uvicorn closes a kept-alive connection that stays silent for ``keep_alive_s``, but a byte every few
seconds resets that timer, and a fresh connection that never sends a whole request head has no timer
at all: a slow-loris holds a connection (a file descriptor, a protocol object) forever. Here every
request head must be complete within ``header_timeout_s`` of the connection opening or of the previous
response; if not, a client that sent part of one is answered 408, and the connection is closed. A
connection beyond ``max_connections`` is answered 503 at once and closed, before it costs anything
more; uvicorn's own ``limit_concurrency`` would answer in plain text and count streams as well.

Every request's scope also carries the ``DIRECT_BODY`` extension (``direct_body.py``): the watch
stream writes its changes straight to the connection with it. Each response's head is held until its
body's first write and leaves with it (``response_head.py``).
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from loadmaster.api.direct_body import DIRECT_BODY, DirectBody
from loadmaster.api.response_head import HeadHeldTransport
from loadmaster.api.responses import json_bytes
from loadmaster.runtime.http_limits import HttpLimits


def raw_error(status: int, reason: str, code: str, message: str) -> bytes:
    """A whole ``Connection: close`` response with the API's error body, for when no request is
    being answered (h11 will not frame a response to a request it has not seen)."""
    body = json_bytes({"error": code, "message": message})
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class LimitedH11Protocol(H11Protocol):
    limits = HttpLimits()

    _head_deadline: asyncio.TimerHandle | None = None
    _direct_body: DirectBody | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            message = f"the server holds {self.limits.max_connections} connections; try again later"
            transport.write(raw_error(503, "Service Unavailable", "unavailable", message))
            transport.close()
            return
        self._arm_head_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_deadline()
        super().connection_lost(exc)
        if self._direct_body is not None:
            self._direct_body.lost()

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._direct_body is not None:
            self._direct_body.drained()

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:  # a whole request head arrived (or a broken one)
            self._cancel_head_deadline()
            # The request's task has not started yet (uvicorn only created it): it sees the extension.
            if self.scope is not None:
                extensions: dict[str, object] = self.scope.setdefault("extensions", {})  # type: ignore[assignment]
                extensions[DIRECT_BODY] = self._open_direct_body
            if self.cycle is not None and self.cycle.transport is self.transport:
                # The response's head leaves with its body, in one write (response_head.py).
                self.cycle.transport = HeadHeldTransport(self.transport, self.loop)  # type: ignore[assignment]

    def _open_direct_body(self) -> DirectBody:
        """The current response's body, from here on written straight to the transport."""
        assert self._direct_body is None, "one direct body at a time"
        self._direct_body = DirectBody(
            self.transport, self.conn.their_http_version == b"1.1", self._close_direct_body
        )
        return self._direct_body

    def _close_direct_body(self) -> None:
        self._direct_body = None

    def on_response_complete(self) -> None:
        # Armed before uvicorn handles a pipelined request, which cancels it again in handle_events.
        self._arm_head_deadline()
        super().on_response_complete()

    def _arm_head_deadline(self) -> None:
        self._cancel_head_deadline()
        self._head_deadline = self.loop.call_later(self.limits.header_timeout_s, self._head_too_slow)

    def _cancel_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_too_slow(self) -> None:
        self._head_deadline = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        if self.conn.trailing_data[0]:  # part of a head arrived: say why the connection ends
            message = f"the request head did not arrive within {self.limits.header_timeout_s} s"
            self.transport.write(raw_error(408, "Request Timeout", "timeout", message))
        self.transport.close()


def limited_protocol(limits: HttpLimits) -> type[LimitedH11Protocol]:
    """The protocol class uvicorn instantiates per connection, bound to ``limits``."""
    return type("LimitedH11Protocol", (LimitedH11Protocol,), {"limits": limits})
