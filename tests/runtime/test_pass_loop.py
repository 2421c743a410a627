"""The leader's pass loop on a fake clock: when passes run, which are full, how bursts are spaced and
how a store failure is retried. Time moves only when a test advances it, so every timing is exact."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from loadmaster.runtime.plane.debounce import BURST_WRITES
from loadmaster.runtime.plane.pass_loop import PassLoop, PassResult, PassTiming
from loadmaster.runtime.plane.storage.store_retries import STORE_RETRY_S
from loadmaster.store.interface import UnavailableError
from loadmaster.testing.fake_clock import FakeClock

pytestmark = pytest.mark.anyio
TIMING = PassTiming(debounce_s=0.05, safety_tick_s=30.0)
TRICKLE_FRACTION = 0.2


class Passes:
    """The pass under test: records (time, full) and returns the scripted results, then nothing."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.seen: list[tuple[float, bool]] = []
        self.script: list[PassResult | Exception] = []

    async def __call__(self, full: bool) -> PassResult:
        self.seen.append((round(self.clock.monotonic(), 6), full))
        outcome = self.script.pop(0) if self.script else PassResult()
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


async def settle() -> None:
    """Let every task that can run, run (no time passes)."""
    for _ in range(50):
        await asyncio.sleep(0)


@asynccontextmanager
async def running(
    *,
    first_pass_full: bool = False,
    retry_full: bool = False,
    next_due_s: Callable[[], float | None] = lambda: None,
    timing: PassTiming = TIMING,
) -> AsyncIterator[tuple[PassLoop, Passes, FakeClock]]:
    clock = FakeClock()
    passes = Passes(clock)
    loop = PassLoop(
        passes,
        timing,
        clock,
        trickle_fraction=TRICKLE_FRACTION,
        first_pass_full=first_pass_full,
        retry_full=retry_full,
        next_due_s=next_due_s,
    )
    task = asyncio.create_task(loop.run())
    try:
        await settle()
        yield loop, passes, clock
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@pytest.mark.parametrize(
    "first_pass_full",
    [pytest.param(False, id="ordinary-first-pass"), pytest.param(True, id="full-first-pass")],
)
async def test_a_term_starts_with_a_pass_at_once(first_pass_full: bool) -> None:
    async with running(first_pass_full=first_pass_full) as (_, passes, _):
        assert passes.seen == [(0.0, first_pass_full)]


async def test_a_change_after_a_quiet_spell_is_handled_at_once() -> None:
    async with running() as (loop, passes, clock):
        clock.advance(3.0)
        loop.wake()
        await settle()
        assert passes.seen == [(0.0, False), (3.0, False)]


async def test_after_a_burst_the_next_pass_starts_a_debounce_after_the_burst_pass_started() -> None:
    async with running() as (loop, passes, clock):
        passes.script.append(PassResult(written=BURST_WRITES))
        loop.wake()
        await settle()
        loop.wake()
        clock.advance(0.049)
        await settle()
        assert len(passes.seen) == 2  # the burst pass ran; the next one waits
        clock.advance(0.002)
        await settle()
        assert passes.seen == [(0.0, False), (0.0, False), (0.051, False)]


async def test_after_a_trickle_the_next_pass_waits_the_trickle_fraction_of_the_debounce() -> None:
    async with running() as (loop, passes, clock):
        passes.script.append(PassResult(written=1))
        loop.wake()
        await settle()
        loop.wake()
        clock.advance(0.009)
        await settle()
        assert len(passes.seen) == 2
        clock.advance(0.002)
        await settle()
        assert passes.seen[-1] == (0.011, False)


async def test_a_conflict_runs_another_pass_after_the_debounce_without_a_change() -> None:
    async with running() as (loop, passes, clock):
        passes.script.append(PassResult(conflicts=1))
        loop.wake()
        await settle()
        clock.advance(0.05)
        await settle()
        assert passes.seen == [(0.0, False), (0.0, False), (0.05, False)]


async def test_the_safety_tick_runs_a_full_pass_with_no_change_at_all() -> None:
    async with running() as (_, passes, clock):
        clock.advance(29.9)
        await settle()
        assert passes.seen == [(0.0, False)]
        clock.advance(0.1)
        await settle()
        assert passes.seen == [(0.0, False), (30.0, True)]


async def test_a_pass_due_before_the_tick_wakes_the_loop_then() -> None:
    async with running(next_due_s=lambda: 5.0) as (_, passes, clock):
        clock.advance(5.0)
        await settle()
        assert passes.seen == [(0.0, False), (5.0, False)]


async def test_a_full_pass_asked_for_runs_at_once_and_the_next_one_is_ordinary() -> None:
    async with running() as (loop, passes, clock):
        clock.advance(1.0)
        loop.ask_full()
        await settle()
        loop.wake()
        await settle()
        assert passes.seen == [(0.0, False), (1.0, True), (1.0, False)]


@pytest.mark.parametrize(
    ("retry_full", "failed_full", "retried_full"),
    [
        pytest.param(False, False, False, id="retry-as-the-failed-ordinary-pass"),
        pytest.param(False, True, True, id="retry-as-the-failed-full-pass"),
        pytest.param(True, False, True, id="retry-full-whatever-failed"),
    ],
)
async def test_a_store_failure_is_retried_after_the_store_retry_time(
    retry_full: bool, failed_full: bool, retried_full: bool
) -> None:
    async with running(retry_full=retry_full) as (loop, passes, clock):
        passes.script.append(UnavailableError("etcd is electing"))
        loop.ask_full() if failed_full else loop.wake()
        await settle()
        clock.advance(STORE_RETRY_S - 0.01)
        await settle()
        assert passes.seen == [(0.0, False), (0.0, failed_full)]
        clock.advance(0.02)
        await settle()
        assert passes.seen[-1] == (round(STORE_RETRY_S + 0.01, 6), retried_full)


WATCH_ONLY = PassTiming(debounce_s=0.05, safety_tick_s=30.0, safety_tick_enabled=False)


@pytest.mark.parametrize(
    "first_pass_full",
    [pytest.param(False, id="ordinary-first-pass"), pytest.param(True, id="full-first-pass")],
)
async def test_with_the_safety_tick_off_no_pass_runs_on_a_timer(first_pass_full: bool) -> None:
    async with running(first_pass_full=first_pass_full, timing=WATCH_ONLY) as (_, passes, clock):
        for _ in range(10):  # ten ticks' worth of quiet
            clock.advance(30.0)
            await settle()
        assert passes.seen == [(0.0, first_pass_full)]


async def test_with_the_safety_tick_off_a_change_still_runs_a_pass_at_once() -> None:
    async with running(timing=WATCH_ONLY) as (loop, passes, clock):
        clock.advance(95.0)
        loop.wake()
        await settle()
        assert passes.seen == [(0.0, False), (95.0, False)]


async def test_with_the_safety_tick_off_a_pass_due_still_wakes_the_loop_then() -> None:
    async with running(next_due_s=lambda: 5.0, timing=WATCH_ONLY) as (_, passes, clock):
        clock.advance(5.0)
        await settle()
        assert passes.seen == [(0.0, False), (5.0, False)]


async def test_with_the_safety_tick_off_a_store_failure_is_still_retried_full() -> None:
    async with running(retry_full=True, timing=WATCH_ONLY) as (loop, passes, clock):
        passes.script.append(UnavailableError("etcd is electing"))
        loop.wake()
        await settle()
        clock.advance(STORE_RETRY_S + 0.01)
        await settle()
        clock.advance(300.0)
        await settle()
        assert passes.seen == [(0.0, False), (0.0, False), (round(STORE_RETRY_S + 0.01, 6), True)]
