"""Server-sent events (the ``text/event-stream`` format of the watch and audit streams), decoded line by line.

The decoder is pure (lines in, events out) so that the agent's async stream and the CLI's blocking
stream share it, and so that it can be tested without a server. Format (WHATWG HTML, "server-sent
events"): ``field: value`` lines; a blank line ends an event; lines starting with ``:`` are comments
(keep-alives); several ``data`` lines are joined with newlines; an event without ``event:`` is a
``message``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

DEFAULT_EVENT = "message"


@dataclass(frozen=True, slots=True)
class ServerEvent:
    event: str
    data: str
    id: str | None = None

    def json(self) -> Any:
        """The data decoded as JSON (every loadmaster stream sends JSON objects)."""
        return json.loads(self.data)


class EventDecoder:
    """Feed it the stream's lines (without their line ending); it returns an event when one is complete."""

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []
        self._id: str | None = None

    def feed(self, line: str) -> ServerEvent | None:
        line = line.rstrip("\r\n")
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        # One optional space after the colon belongs to the syntax, not to the value.
        value = value.removeprefix(" ")
        if field == "event":
            self._event = value
        elif field == "data":
            self._data.append(value)
        elif field == "id":
            self._id = value
        # "retry" and unknown fields are ignored, as the format requires.
        return None

    def _dispatch(self) -> ServerEvent | None:
        if not self._data and not self._event:
            return None
        event = ServerEvent(self._event or DEFAULT_EVENT, "\n".join(self._data), self._id)
        self._event, self._data = "", []
        return event
