"""A clock that moves only when told to: the tests' ``Clock`` (runtime/plane/clock.py).

``advance(seconds)`` moves wall time and monotonic time together and wakes every ``sleep`` and
``wait`` whose time has come; they resume when the test next yields to the event loop. Nothing waits
on real time, so a test of a loop's timing is exact on any machine, however busy.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from datetime import UTC, datetime, timedelta

DEFAULT_START = datetime(2026, 11, 21, 10, 0, 0, tzinfo=UTC)


class FakeClock:
    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or DEFAULT_START
        if self._now.tzinfo is None:
            raise ValueError("start: must be timezone-aware")
        self._elapsed = 0.0
        # (due, order, waiter): the order breaks ties so that timers due together fire as set.
        self._timers: list[tuple[float, int, asyncio.Future[object]]] = []
        self._order = itertools.count()

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        return self._elapsed

    def advance(self, seconds: float) -> datetime:
        if seconds < 0:
            raise ValueError(f"seconds: a clock does not go back ({seconds})")
        self._now += timedelta(seconds=seconds)
        self._elapsed += seconds
        while self._timers and self._timers[0][0] <= self._elapsed:
            _, _, waiter = heapq.heappop(self._timers)
            if not waiter.done():
                waiter.set_result(None)
        return self._now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        await self._timer(seconds)

    async def wait(self, event: asyncio.Event, timeout_s: float) -> bool:
        if event.is_set():
            return True
        if timeout_s <= 0:
            await asyncio.sleep(0)  # as a zero timeout on the event loop: one turn for the event
            return event.is_set()
        setter: asyncio.Future[object] = asyncio.ensure_future(event.wait())
        timer: asyncio.Future[object] = self._timer(timeout_s)
        try:
            await asyncio.wait((setter, timer), return_when=asyncio.FIRST_COMPLETED)
        finally:
            setter.cancel()
            timer.cancel()
        return event.is_set()

    def _timer(self, seconds: float) -> asyncio.Future[object]:
        """A future that ``advance`` resolves once ``seconds`` more have passed."""
        waiter: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._timers, (self._elapsed + seconds, next(self._order), waiter))
        return waiter
