"""The loop the leader's two services run (the scheduler's cycles, the controllers' passes).

Each turn::

    wait until woken (a change, a trigger), the safety tick is due, or ``next_due_s()`` has passed
    if the last pass was part of a burst: wait until ``quiet_until`` (runtime/plane/debounce.py)
    yield once, so that the rest of the transaction that woke the loop arrives too
    run a pass: full when the safety tick is due or a full pass was asked for
    a pass that conflicted wakes the loop again (re-read, retry); a store that could not be reached
    gets STORE_RETRY_S, then a retry

The safety tick (default 30 s) makes a full pass whatever the events said, so nothing a missed event
left behind stays wrong for long. With ``safety_tick_enabled`` off (watch-only, as LRS's
``RECONCILE_POLLING_ENABLED=false``) there is no tick: a pass runs only when woken, when ``next_due_s()``
says, at the start of a term and after a store failure. A term starts with a pass at once: work a
previous leader left (replicas it created but did not place) sends the new one no event. Time is read
and waited on only through the ``Clock``, so a test or a replay can move it.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from loadmaster.runtime.plane.clock import Clock
from loadmaster.runtime.plane.debounce import quiet_until
from loadmaster.runtime.plane.storage.store_retries import STORE_RETRY_S
from loadmaster.store.interface import UnavailableError

DEFAULT_DEBOUNCE_S = 0.05  # JACO's debounce (debounce.py)
DEFAULT_SAFETY_TICK_S = 30.0


@dataclass(frozen=True, slots=True)
class PassTiming:
    """The two loops' settings (``loadmaster server --debounce-ms``, ``--tick-s``, ``--no-safety-tick``)."""

    debounce_s: float = DEFAULT_DEBOUNCE_S
    safety_tick_s: float = DEFAULT_SAFETY_TICK_S
    safety_tick_enabled: bool = True

    @property
    def tick_interval_s(self) -> float:
        """Seconds between safety ticks; infinite when the tick is off (watch-only)."""
        return self.safety_tick_s if self.safety_tick_enabled else math.inf


@dataclass(frozen=True, slots=True)
class PassResult:
    written: int = 0
    conflicts: int = 0


RunPass = Callable[[bool], Awaitable[PassResult]]  # full -> what the pass wrote


class PassLoop:
    """Runs ``run_pass`` as the module docstring says, until cancelled.

    ``trickle_fraction``: of the debounce, the wait after a pass that wrote a little (debounce.py).
    ``first_pass_full``: whether the term's first pass is a full one. ``retry_full``: whether the
    pass after a store failure is full and counts as the safety tick (a pass that takes its work as
    it starts has lost it when the store fails), rather than as full as the pass that failed.
    """

    def __init__(
        self,
        run_pass: RunPass,
        timing: PassTiming,
        clock: Clock,
        *,
        trickle_fraction: float = 0.0,
        first_pass_full: bool,
        retry_full: bool,
        next_due_s: Callable[[], float | None] = lambda: None,
        on_store_error: Callable[[UnavailableError], None] = lambda _: None,
    ) -> None:
        self._run_pass = run_pass
        self.timing = timing
        self._trickle_fraction = trickle_fraction
        self._clock = clock
        self._first_pass_full = first_pass_full
        self._retry_full = retry_full
        self._next_due_s = next_due_s
        self._on_store_error = on_store_error
        self._wake = asyncio.Event()
        self._full_asked = False
        self.full_was_asked = False  # whether the pass running now is full because it was asked for

    def wake(self) -> None:
        """Run a pass soon (something changed)."""
        self._wake.set()

    def ask_full(self) -> None:
        """Run a full pass soon."""
        self._full_asked = True
        self._wake.set()

    async def run(self) -> None:
        clock, timing = self._clock, self.timing
        tick_s = timing.tick_interval_s
        next_tick = clock.monotonic() + (0.0 if self._first_pass_full else tick_s)
        burst_until = -float("inf")  # when the next pass may start (debounce.py)
        self._wake.set()
        while True:
            timeout = next_tick - clock.monotonic()
            due_s = self._next_due_s()
            if due_s is not None:
                timeout = min(timeout, due_s)
            if math.isinf(timeout):
                # Watch-only and nothing due: no timer at all (a virtual clock must not jump to it).
                await self._wake.wait()
            else:
                await clock.wait(self._wake, max(0.0, timeout))
            self._wake.clear()
            if clock.monotonic() < burst_until:
                await clock.sleep(burst_until - clock.monotonic())  # coalesce a burst
            await clock.sleep(0)  # let the events of the transaction that woke us arrive too
            full = self._full_asked or clock.monotonic() >= next_tick
            if clock.monotonic() >= next_tick:
                next_tick = clock.monotonic() + tick_s
            self.full_was_asked, self._full_asked = self._full_asked, False
            started = clock.monotonic()
            try:
                result = await self._run_pass(full)
            except UnavailableError as error:
                # The term is the keepalive's to end, not this loop's: ending it here would make every
                # server wait out the lease before anyone runs a pass again.
                self._on_store_error(error)
                await clock.sleep(STORE_RETRY_S)
                if self._retry_full:
                    next_tick = clock.monotonic()
                else:
                    self._full_asked = self._full_asked or full
                self._wake.set()
                continue
            burst_until = quiet_until(
                started, result.written, result.conflicts, timing.debounce_s, self._trickle_fraction
            )
            if result.conflicts:
                self._wake.set()  # something changed under the pass: read it again and retry
