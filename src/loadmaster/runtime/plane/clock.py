"""The clock: the one place the server reads the time, so tests can replace it with a fake one.

Everything below ``runtime/`` takes ``now`` as an argument (DESIGN principle 6); the runtime reads it
here. ``now()`` is wall time in UTC (it is written into objects and compared with agents' heartbeats).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware, in UTC."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FakeClock:
    """A clock that moves only when told to (tests)."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 11, 21, 10, 0, 0, tzinfo=UTC)
        if self._now.tzinfo is None:
            raise ValueError("start: must be timezone-aware")

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> datetime:
        if seconds < 0:
            raise ValueError(f"seconds: a clock does not go back ({seconds})")
        self._now += timedelta(seconds=seconds)
        return self._now


async def wait_or_timeout(event: asyncio.Event, timeout_s: float) -> bool:
    """Wait for ``event`` at most ``timeout_s``; True if it was set.

    ``asyncio.timeout`` rather than ``asyncio.wait_for``: on Python 3.11, ``wait_for`` can swallow a
    cancellation that arrives as the event is set, and a loop around it then never stops.
    """
    try:
        async with asyncio.timeout(timeout_s):
            await event.wait()
    except TimeoutError:
        return False
    return True
