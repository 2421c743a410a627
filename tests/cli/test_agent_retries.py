"""The agent's retries (tenacity): exponential waits with jitter up to a cap, only for errors worth
retrying, and a stop request ends a wait at once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from loadmaster.agent.link import retries
from loadmaster.agent.link.retries import StopRequestedError, retrying


@pytest.fixture
def short_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retries, "FIRST_RETRY_S", 0.001)
    monkeypatch.setattr(retries, "JITTER_S", 0.001)
    monkeypatch.setattr(retries, "MAX_RETRY_S", 0.004)


def _failing(times: int, error: Exception) -> tuple[list[int], Callable[[], Awaitable[int]]]:
    calls: list[int] = []

    async def call() -> int:
        calls.append(1)
        if len(calls) <= times:
            raise error
        return 7

    return calls, call


@pytest.mark.usefixtures("short_waits")
def test_a_call_is_tried_again_after_each_error_worth_retrying_waiting_longer_each_time() -> None:
    waits: list[float] = []
    calls, call = _failing(4, ConnectionError("down"))
    retry = retrying(asyncio.Event(), lambda e: isinstance(e, ConnectionError), lambda _e, s: waits.append(s))
    assert asyncio.run(retry(call)) == 7
    assert len(calls) == 5 and len(waits) == 4
    # n-th wait: min(0.001 * 2**(n-1) + uniform(0, 0.001), 0.004)
    for n, wait in enumerate(waits, start=1):
        base = min(0.001 * 2 ** (n - 1), 0.004)
        assert base <= wait <= min(base + 0.001, 0.004)


def test_an_error_not_worth_retrying_propagates_at_once() -> None:
    calls, call = _failing(1, PermissionError("forbidden"))
    retry = retrying(asyncio.Event(), lambda e: isinstance(e, ConnectionError), lambda _e, _s: None)
    with pytest.raises(PermissionError):
        asyncio.run(retry(call))
    assert len(calls) == 1


def test_a_stop_request_ends_the_wait_at_once() -> None:
    stop = asyncio.Event()
    calls, call = _failing(100, ConnectionError("down"))
    # the first wait is 0.2 s or more; the stop comes as it starts, so the call is not tried again
    retry = retrying(stop, lambda e: isinstance(e, ConnectionError), lambda _e, _s: stop.set())
    with pytest.raises(StopRequestedError):
        asyncio.run(retry(call))
    assert len(calls) == 1


def test_agents_cut_off_together_do_not_come_back_together() -> None:
    firsts: list[float] = []

    async def first_wait() -> None:
        stop = asyncio.Event()

        def record(_error: BaseException | None, seconds: float) -> None:
            firsts.append(seconds)
            stop.set()

        _calls, call = _failing(1, ConnectionError("down"))
        with pytest.raises(StopRequestedError):
            await retrying(stop, lambda e: isinstance(e, ConnectionError), record)(call)

    for _ in range(20):
        asyncio.run(first_wait())
    assert all(0.2 <= wait <= 0.4 for wait in firsts)
    assert len(set(firsts)) > 1  # jitter: twenty agents do not all wait the same


@pytest.mark.usefixtures("short_waits")
def test_a_lambda_returning_a_coroutine_is_awaited_each_try() -> None:
    calls, call = _failing(2, ConnectionError("down"))
    retry = retrying(asyncio.Event(), lambda e: isinstance(e, ConnectionError), lambda _e, _s: None)
    assert asyncio.run(retry(lambda: call())) == 7  # noqa: PLW0108 (a lambda is the point)
    assert len(calls) == 3
