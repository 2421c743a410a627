"""The replicas the store places on one node, kept current for the real agent.

Like the simulated agent's reporter: with a token that may read workloads, list every replica and
follow the watch stream from the list's revision (list again on ``relist``, after the stream drops,
and every RELIST_EVERY_S anyway); with an agent token, poll ``GET /api/nodes/{name}/replicas``.
``replicas`` maps name -> stored object for those whose ``status.node_ref`` is this node; ``changed``
is set whenever it changes, and ``listed`` once the first complete list arrived (adoption waits for it:
before that, "not assigned" cannot be told from "not known yet").
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from loadmaster.agent.api import AgentApi, AgentApiError
from loadmaster.agent.assignments import RELIST_EVERY_S, STREAM_CLOSED_PAUSE_S
from loadmaster.agent.lifecycle import replica_node
from loadmaster.agent.pacing import sleep_or_stop
from loadmaster.agent.retries import StopRequestedError, retrying


class AssignmentFeed:
    def __init__(self, api: AgentApi, node: str, poll_s: float, say: Callable[[str], None]) -> None:
        self.api = api
        self.node = node
        self.poll_s = poll_s
        self.say = say
        self.replicas: dict[str, dict[str, Any]] = {}
        self.changed = asyncio.Event()
        self.listed = False

    async def run(self, stop: asyncio.Event) -> None:
        if await self._watch_until_forbidden(stop):
            self.say(f"this token may not watch replicas; polling every {self.poll_s:g}s")
            await self._poll(stop)

    def _replace_all(self, items: list[dict[str, Any]]) -> None:
        self.replicas = {
            str(item["metadata"]["name"]): item for item in items if replica_node(item) == self.node
        }
        self.listed = True
        self.changed.set()

    def _put(self, replica: Mapping[str, Any]) -> None:
        name = str((replica.get("metadata") or {}).get("name", ""))
        if replica_node(replica) == self.node:
            self.replicas[name] = dict(replica)
        elif self.replicas.pop(name, None) is None:
            return
        self.changed.set()

    def _delete(self, name: str) -> None:
        if self.replicas.pop(name, None) is not None:
            self.changed.set()

    async def _watch_until_forbidden(self, stop: asyncio.Event) -> bool:
        """Follow the watch stream until ``stop``; True if the token may not watch (then poll instead).
        A failed list or stream is tried again after a jittered backoff (``retries.py``)."""

        def on_retry(error: BaseException | None, seconds: float) -> None:
            message = error.message if isinstance(error, AgentApiError) else str(error)
            self.say(f"watching replicas failed: {message}; again in {seconds:.1f}s")

        def worth_retrying(error: BaseException) -> bool:
            return isinstance(error, AgentApiError) and error.status != 403

        retry = retrying(stop, worth_retrying, on_retry)
        while not stop.is_set():
            try:
                closed: bool = await retry(self._list_and_follow)
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

    async def _list_and_follow(self) -> bool:
        items, revision = await self.api.all_replicas()
        self._replace_all(items)
        return await self._follow(revision)

    async def _follow(self, revision: int) -> bool:
        async with asyncio.timeout(RELIST_EVERY_S):
            async for event in self.api.watch("replicas", revision):
                if event.event == "relist":
                    return False
                data = event.json()
                if event.event == "put":
                    self._put(data.get("object") or {})
                elif event.event == "delete":
                    self._delete(str(data.get("name", "")))
        return True

    async def _poll(self, stop: asyncio.Event) -> None:
        while True:
            try:
                self._replace_all(await self.api.node_replicas(self.node))
            except AgentApiError as exc:
                self.say(f"reading assignments failed: {exc.message}")
            if await sleep_or_stop(stop, self.poll_s):
                return
