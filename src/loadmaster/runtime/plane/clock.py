"""The clock: the one place the server reads the time and waits, so tests can replace it with a fake one
(``loadmaster.testing.fake_clock``).

Everything below ``runtime/`` takes ``now`` as an argument (DESIGN principle 6); the runtime reads it
here. ``now()`` is wall time in UTC (it is written into objects and compared with agents' heartbeats);
``monotonic()`` never goes back and measures intervals; ``sleep`` and ``wait`` wait on the same clock.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware, in UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (for intervals and deadlines, not for stamps)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Return after ``seconds`` on this clock (0: let every other ready task run first)."""
        ...

    async def wait(self, event: asyncio.Event, timeout_s: float) -> bool:
        """Wait for ``event`` at most ``timeout_s`` on this clock; True if it was set."""
        ...


class SystemClock:
    """Wall time, and the event loop's own clock and timers."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return asyncio.get_running_loop().time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def wait(self, event: asyncio.Event, timeout_s: float) -> bool:
        # asyncio.timeout rather than asyncio.wait_for: on Python 3.11, wait_for can swallow a
        # cancellation that arrives as the event is set, and a loop around it then never stops.
        try:
            async with asyncio.timeout(timeout_s):
                await event.wait()
        except TimeoutError:
            return False
        return True
