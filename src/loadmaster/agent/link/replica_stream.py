"""Following the replicas over the watch stream, for both agents (simulated and real).

List every replica, then follow ``GET /api/watch?kinds=replicas`` from the list's revision; list again
on ``relist``, after the stream drops (with a jittered back-off on errors), and every RELIST_EVERY_S
anyway. A token that may not watch (an agent token: 403) ends the loop with True, and the caller polls
instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from loadmaster.agent.link.api import AgentApi, AgentApiError
from loadmaster.agent.link.pacing import sleep_or_stop
from loadmaster.agent.link.retries import StopRequestedError, retrying

# Even a healthy stream is re-listed this often: a report that failed while the stream stayed up (a 5xx)
# is then retried, the way a controller's safety tick catches what an event missed.
RELIST_EVERY_S = 30.0
# A server that closes the stream is usually shutting down: pause before listing again, not spin.
STREAM_CLOSED_PAUSE_S = 0.2


async def follow_replicas(
    api: AgentApi,
    stop: asyncio.Event,
    say: Callable[[str], None],
    listed: Callable[[list[dict[str, Any]]], None],
    put: Callable[[Mapping[str, Any]], None],
    deleted: Callable[[str], None] = lambda name: None,
) -> bool:
    """Call ``listed`` with every full list, ``put`` / ``deleted`` with each change, until ``stop``;
    True if the token may not watch (then poll instead). A failed list or stream is tried again after a
    jittered back-off (``retries.py``), started afresh by each stream that closes or asks to relist."""

    def on_retry(error: BaseException | None, seconds: float) -> None:
        message = error.message if isinstance(error, AgentApiError) else str(error)
        say(f"watching replicas failed: {message}; again in {seconds:.1f}s")

    def worth_retrying(error: BaseException) -> bool:
        return isinstance(error, AgentApiError) and error.status != 403

    async def list_and_follow() -> bool:
        items, revision = await api.all_replicas()
        listed(items)
        return await _follow(api, revision, put, deleted)

    retry = retrying(stop, worth_retrying, on_retry)
    while not stop.is_set():
        try:
            closed = await retry(list_and_follow)
        except StopRequestedError:
            return False
        except TimeoutError:
            continue
        except AgentApiError as exc:  # the only one not retried: the token may not watch
            assert exc.status == 403
            return True
        if closed and await sleep_or_stop(stop, STREAM_CLOSED_PAUSE_S):
            return False
    return False


async def _follow(
    api: AgentApi,
    revision: int,
    put: Callable[[Mapping[str, Any]], None],
    deleted: Callable[[str], None],
) -> bool:
    """Pass on each change until the stream asks to relist (False), the server closes it (True), or
    RELIST_EVERY_S passes (TimeoutError)."""
    async with asyncio.timeout(RELIST_EVERY_S):
        async for event in api.watch("replicas", revision):
            if event.event == "relist":
                return False
            data = event.json()
            if event.event == "put":
                put(data.get("object") or {})
            elif event.event == "delete":
                deleted(str(data.get("name", "")))
    return True
