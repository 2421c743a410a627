"""Following the replicas over the watch stream, for both agents (simulated and real).

List every replica, then follow ``GET /api/watch?kinds=replicas`` from the list's revision; list again on
``relist``, after the stream drops (with a back-off on errors), and every RELIST_EVERY_S anyway. A token
that may not watch (an agent token: 403) ends the loop with True, and the caller polls instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from loadmaster.agent.api import AgentApi, AgentApiError
from loadmaster.agent.pacing import MAX_RETRY_S, sleep_or_stop

# Even a healthy stream is re-listed this often: a report that failed while the stream stayed up (a 5xx)
# is then retried, the way a controller's safety tick catches what an event missed.
RELIST_EVERY_S = 30.0
# A server that closes the stream is usually shutting down: pause before listing again, not spin.
STREAM_CLOSED_PAUSE_S = 0.2
_FIRST_RETRY_S = 0.2


async def follow_replicas(
    api: AgentApi,
    stop: asyncio.Event,
    say: Callable[[str], None],
    listed: Callable[[list[dict[str, Any]]], None],
    put: Callable[[Mapping[str, Any]], None],
    deleted: Callable[[str], None] = lambda name: None,
) -> bool:
    """Call ``listed`` with every full list, ``put`` / ``deleted`` with each change, until ``stop``;
    True if the token may not watch (then poll instead)."""
    delay = _FIRST_RETRY_S
    while not stop.is_set():
        try:
            items, revision = await api.all_replicas()
            listed(items)
            delay = _FIRST_RETRY_S
            closed = await _follow(api, revision, put, deleted)
            if closed and await sleep_or_stop(stop, STREAM_CLOSED_PAUSE_S):
                return False
        except TimeoutError:
            continue
        except AgentApiError as exc:
            if exc.status == 403:
                return True
            say(f"watching replicas failed: {exc.message}; again in {delay:g}s")
            if await sleep_or_stop(stop, delay):
                return False
            delay = min(delay * 2, MAX_RETRY_S)
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
