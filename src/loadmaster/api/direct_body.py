"""``DirectBody``: the rest of a streaming response's body, written straight to its connection.

An ASGI ``send`` of one body chunk costs ~50-80 us in Python (Starlette's streaming response, an async
generator step, uvicorn's h11 event, a task switch); a watch change sent to 1,000 streams that way
is 50-80 ms on the event loop. A ``transport.write`` of bytes already framed costs ~5 us. So the
server's HTTP protocol (``http_protocol.py``) offers each request, as the ASGI scope extension
``DIRECT_BODY``, a way to take over its response body once the head (and any first chunks) went out
through ``send``; the response ends through ``send`` again (h11 writes the last chunk then), after
``close()``.

Framing is h11's for a response without a Content-Length: chunks (``<hex length>\\r\\n<data>\\r\\n``)
to an HTTP/1.1 client, the bare bytes (the connection closing ends it) to an HTTP/1.0 one. While a
direct body is open, the transport asks for a pause as soon as anything is left unsent (its high-water
mark is 0), so ``on_drained`` is called exactly when the client has taken everything written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

# The ASGI scope extension: a function that opens the request's DirectBody.
DIRECT_BODY = "loadmaster.direct_body"


class DirectBody:
    def __init__(self, transport: asyncio.Transport, chunked: bool, on_close: Callable[[], None]) -> None:
        self._transport = transport
        self._chunked = chunked
        self._on_close = on_close
        self.on_drained: Callable[[], None] | None = None
        self.on_lost: Callable[[], None] | None = None
        transport.set_write_buffer_limits(high=0)

    def unsent_bytes(self) -> int:
        return self._transport.get_write_buffer_size()

    def write(self, data: bytes) -> None:
        if self._transport.is_closing():
            return  # the client is gone: on_lost follows
        self._transport.write(b"%x\r\n%b\r\n" % (len(data), data) if self._chunked else data)

    def close(self) -> None:
        """Give the body back to ``send`` (which ends the response) and the connection its limits."""
        self.on_drained = self.on_lost = None
        self._on_close()
        if not self._transport.is_closing():
            self._transport.set_write_buffer_limits()

    def drained(self) -> None:
        if self.on_drained is not None:
            self.on_drained()

    def lost(self) -> None:
        if self.on_lost is not None:
            self.on_lost()
