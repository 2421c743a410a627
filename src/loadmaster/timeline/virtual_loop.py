"""An asyncio event loop on virtual time: the timeline harness's clock.

Every sleep, timer, timeout, debounce and tick of the control plane goes through the event loop
(``asyncio.sleep``, ``loop.call_at``, ``asyncio.timeout``, ``loop.time()``), so swapping the loop swaps
the clock for all of them at once, with no second code path. The loop's ``time()`` is a number that
moves only here:

* when callbacks are ready, they run, and time stands still (zero-delay work settles at its instant);
* when nothing is ready, time jumps to the earliest timer and that timer runs;
* work handed to a worker thread (``asyncio.to_thread``, ``run_in_executor``) runs at once, inline: a
  computation off the loop takes no virtual time and its result lands at the instant it was asked for,
  the same on every run.

Timers due at the same instant run in the order they were scheduled (the handle carries a sequence
number; asyncio's own heap leaves ties unordered). With no I/O and no wall-clock reads on the paths it
drives, the same program gives the same interleaving, and so the same output, on every run.

Nothing left to run and no timer pending is a deadlock in a timeline (the harness always has its next
step scheduled): ``VirtualTimeIdleError`` says so instead of blocking forever.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import selectors
from asyncio import events
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any, TypeVar

T = TypeVar("T")

# asyncio caps one select() wait at a day (MAXIMUM_SELECT_TIMEOUT); a longer gap takes several jumps.
_MAX_JUMP_S = 24 * 3600.0


# Loop iterations at one instant before the run counts as stuck: a bug that re-arms a timer in the past
# spins without time ever moving, which on a virtual clock is a hang, not a slow run.
MAX_ITERATIONS_PER_INSTANT = 2_000_000


class VirtualTimeIdleError(RuntimeError):
    """The loop has nothing ready and no timer: it would wait forever."""


class VirtualTimeStuckError(RuntimeError):
    """The loop ran MAX_ITERATIONS_PER_INSTANT times without time moving: something spins."""


class _SequencedTimer(events.TimerHandle):
    """A timer that sorts by (when, order scheduled): ties run first in, first out."""

    __slots__ = ("_sequence",)

    def __init__(self, when: float, sequence: int, *args: Any, **kwargs: Any) -> None:
        super().__init__(when, *args, **kwargs)
        self._sequence = sequence

    def __lt__(self, other: object) -> bool:
        if isinstance(other, _SequencedTimer):
            return (self.when(), self._sequence) < (other.when(), other._sequence)
        return super().__lt__(other)  # type: ignore[operator]

    def __le__(self, other: object) -> bool:
        if isinstance(other, _SequencedTimer):
            return (self.when(), self._sequence) <= (other.when(), other._sequence)
        return super().__le__(other)  # type: ignore[operator]

    def __gt__(self, other: object) -> bool:
        if isinstance(other, _SequencedTimer):
            return (self.when(), self._sequence) > (other.when(), other._sequence)
        return super().__gt__(other)  # type: ignore[operator]

    def __ge__(self, other: object) -> bool:
        if isinstance(other, _SequencedTimer):
            return (self.when(), self._sequence) >= (other.when(), other._sequence)
        return super().__ge__(other)  # type: ignore[operator]


class _VirtualSelector(selectors.BaseSelector):
    """The real selector for the loop's own wake-up pipe, with waits turned into jumps of virtual time."""

    def __init__(self) -> None:
        self._real = selectors.DefaultSelector()
        self.loop: VirtualTimeLoop | None = None

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._real.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.modify(fileobj, events, data)

    def get_map(self) -> Any:
        return self._real.get_map()

    def close(self) -> None:
        self._real.close()

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        loop = self.loop
        assert loop is not None
        loop.count_iteration()
        if timeout == 0:
            return self._real.select(0)
        ready = self._real.select(0)
        if ready:
            return ready
        if timeout is None:
            raise VirtualTimeIdleError("nothing is ready and no timer is due: the program would wait forever")
        loop.jump(timeout)
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop whose ``time()`` is virtual seconds since its start (0.0)."""

    def __init__(self) -> None:
        selector = _VirtualSelector()
        super().__init__(selector)
        selector.loop = self
        self._virtual_now = 0.0
        self._clock_resolution = 1e-9
        self._timer_sequence = itertools.count()
        self._counted_at, self._iterations = 0.0, 0

    def time(self) -> float:
        return self._virtual_now

    def count_iteration(self) -> None:
        if self._virtual_now != self._counted_at:
            self._counted_at, self._iterations = self._virtual_now, 0
        self._iterations += 1
        if self._iterations > MAX_ITERATIONS_PER_INSTANT:
            raise VirtualTimeStuckError(
                f"{MAX_ITERATIONS_PER_INSTANT} loop iterations at t={self._virtual_now}s without time moving"
            )

    def jump(self, timeout: float) -> None:
        """Move time to the earliest timer (``timeout`` is the loop's own wait until it)."""
        timers = self._timers()
        if timeout >= _MAX_JUMP_S or not timers:
            self._virtual_now += min(timeout, _MAX_JUMP_S)
            return
        # Land exactly on the timer's instant: now + (when - now) can round below it.
        self._virtual_now = max(self._virtual_now, timers[0].when())

    def _timers(self) -> list[events.TimerHandle]:
        """asyncio's heap of pending timers (``BaseEventLoop._scheduled``), earliest first."""
        timers: list[events.TimerHandle] = getattr(self, "_scheduled")  # noqa: B009 - private, typed here
        return timers

    def call_at(  # type: ignore[override]
        self, when: float, callback: Callable[..., object], *args: Any, context: Any = None
    ) -> events.TimerHandle:
        if when is None:
            raise TypeError("when cannot be None")
        self._check_closed()  # type: ignore[attr-defined]
        timer = _SequencedTimer(when, next(self._timer_sequence), callback, args, self, context)
        heapq.heappush(self._timers(), timer)
        timer._scheduled = True  # type: ignore[attr-defined]
        return timer

    def run_in_executor(  # type: ignore[override]
        self, executor: Executor | None, func: Callable[..., T], *args: Any
    ) -> asyncio.Future[T]:
        """Run ``func`` now, on this thread, and return its already-settled future.

        Work handed to a thread takes no virtual time, so running it inline is the same as a thread whose
        result lands at the instant it was asked for, without the hand-off: deterministic, and cheaper
        than a thread in a run that is all computation. The caller still awaits a future, as in the server.
        """
        future: asyncio.Future[T] = self.create_future()
        try:
            future.set_result(func(*args))
        except Exception as error:  # the future carries it to the awaiting caller, as a thread's would
            future.set_exception(error)
        return future

    def is_settled(self) -> bool:
        """Nothing ready to run and no timer due now: everything due at this instant has run."""
        if self._ready:  # type: ignore[attr-defined]
            return False
        due = self._virtual_now + self._clock_resolution
        return not any(not t.cancelled() and t.when() < due for t in self._timers())


async def settle() -> None:
    """Return once every callback and timer due at the current instant has run (and what they started)."""
    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualTimeLoop)
    await asyncio.sleep(0)
    while not loop.is_settled():
        await asyncio.sleep(0)
