"""``HeadHeldTransport``: a response's status line and headers leave with its body, in one write.

uvicorn writes a response in two ``transport.write`` calls, the head and then the body, and each is a
``send`` system call at once: two system calls, two wake-ups of the client, and twice the event loop
giving up the GIL and waiting to take it back from the server's worker threads (the busy-cycle bench,
``bench/busy_cycle.py``: a fifth of the loop's busy samples sat in those writes). The server's HTTP
protocol (``http_protocol.py``) hands each request's response cycle this wrapper instead: the first
write (the head) is held until the next one (the body, or its first chunk) and goes out joined to it.
A response whose body is slow to come (a stream waiting for its first change, a ``100 Continue``) gets
its head at the loop's next turn anyway, so nothing waits on the hold.
"""

from __future__ import annotations

import asyncio
from typing import Any


class HeadHeldTransport:
    """Everything but ``write`` and ``close`` is the wrapped transport's."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None
        self._first = True

    def write(self, data: bytes) -> None:
        if self._first:
            self._first = False
            self._held = bytes(data)
            self._loop.call_soon(self.flush)
            return
        if self._held is not None:
            data, self._held = self._held + data, None
        if data:
            self._transport.write(data)

    def flush(self) -> None:
        """Write the held head, if it is still held."""
        if self._held is not None:
            held, self._held = self._held, None
            self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
