"""How an agent tries the server again: exponential backoff with jitter (tenacity), cut short by a stop.

The n-th wait is ``min(FIRST_RETRY_S * 2**(n-1) + uniform(0, JITTER_S), MAX_RETRY_S)``: 0.2 s, 0.4 s,
0.8 s ... up to 5 s, each with up to 0.2 s of jitter, so that agents a server restart cut off together do
not come back together (a thousand simulated nodes registering on the same tick). A stop request ends
the wait at once: the retried call then raises ``StopRequestedError``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, wait_exponential_jitter

from loadmaster.agent.link.pacing import MAX_RETRY_S, sleep_or_stop

FIRST_RETRY_S = 0.2
JITTER_S = 0.2
T = TypeVar("T")


class StopRequestedError(Exception):
    """The agent was asked to stop while waiting to try again."""


def retrying(
    stop: asyncio.Event,
    worth_retrying: Callable[[BaseException], bool],
    on_retry: Callable[[BaseException | None, float], None],
) -> Callable[[Callable[[], Awaitable[T]]], Awaitable[T]]:
    """``await retrying(...)(call)``: ``call()`` awaited until it returns, again after each error
    ``worth_retrying`` accepts (any other error propagates); ``on_retry(error, seconds)`` before each wait.

    ``call`` is any callable returning an awaitable (a lambda too): tenacity would take a plain function
    for a synchronous one and never await what it returns, so it is handed an ``async def`` here."""

    async def sleep(seconds: float) -> None:
        if await sleep_or_stop(stop, seconds):
            raise StopRequestedError

    def before_sleep(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        on_retry(error, state.next_action.sleep if state.next_action is not None else 0.0)

    attempts = AsyncRetrying(
        wait=wait_exponential_jitter(multiplier=FIRST_RETRY_S, max=MAX_RETRY_S, exp_base=2, jitter=JITTER_S),
        retry=retry_if_exception(worth_retrying),
        sleep=sleep,
        before_sleep=before_sleep,
        reraise=True,
    )

    async def retried(call: Callable[[], Awaitable[T]]) -> T:
        async def attempt() -> T:
            return await call()

        result: T = await attempts(attempt)
        return result

    return retried
