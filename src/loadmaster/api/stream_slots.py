"""How many event streams (watch, audit follow) are open, in total and per token, and the cap on both.

A stream holds a connection, a task and a place in the watch broadcast for as long as its client
likes, so each one takes a slot first; past ``max_watch_streams`` (in total) or
``max_watch_streams_per_token`` (for one token) a new stream is refused with 429 ``too_many_streams``
before anything is opened. The slot is given back when the response ends, however it ends.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import AsyncIterable, Callable, Mapping

from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from loadmaster.api.errors import ApiError


class StreamSlots:
    def __init__(self, total: int, per_token: int) -> None:
        self.total, self.per_token = total, per_token
        self._held: Counter[str] = Counter()  # sha256 of the token -> open streams

    @property
    def open(self) -> int:
        return self._held.total()

    def take(self, token: str) -> Callable[[], None]:
        """Hold a slot for ``token``'s stream; the returned function gives it back (once)."""
        key = hashlib.sha256(token.encode()).hexdigest()
        if self.open >= self.total:
            raise ApiError(
                429, "too_many_streams", f"the server has {self.total} streams open; try again later"
            )
        if self._held[key] >= self.per_token:
            raise ApiError(
                429, "too_many_streams", f"this token has {self.per_token} streams open: close one first"
            )
        self._held[key] += 1
        given_back = False

        def give_back() -> None:
            nonlocal given_back
            if not given_back:
                given_back = True
                self._held[key] -= 1
                if not self._held[key]:
                    del self._held[key]

        return give_back


class HeldStream(StreamingResponse):
    """A streaming response that gives its slot back when it ends."""

    def __init__(
        self,
        content: AsyncIterable[bytes],
        give_back: Callable[[], None],
        media_type: str,
        headers: Mapping[str, str],
    ) -> None:
        super().__init__(content, media_type=media_type, headers=headers)
        self._give_back = give_back

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._give_back()
