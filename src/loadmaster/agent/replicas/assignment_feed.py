"""The replicas the store places on one node, kept current for the real agent.

Like the simulated agent's reporter: with a token that may read workloads, list every replica and
follow the watch stream (``replica_stream``); with an agent token, poll ``GET /api/nodes/{name}/replicas``.
``replicas`` maps name -> stored object for those whose ``status.node_ref`` is this node; ``changed``
is set whenever it changes, and ``listed`` once the first complete list arrived (adoption waits for it:
before that, "not assigned" cannot be told from "not known yet").
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from loadmaster.agent.link.api import AgentApi, AgentApiError
from loadmaster.agent.link.pacing import sleep_or_stop
from loadmaster.agent.link.replica_stream import follow_replicas
from loadmaster.agent.simulation.lifecycle import replica_node


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
        if await follow_replicas(self.api, stop, self.say, self._replace_all, self._put, self._delete):
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

    async def _poll(self, stop: asyncio.Event) -> None:
        while True:
            try:
                self._replace_all(await self.api.node_replicas(self.node))
            except AgentApiError as exc:
                self.say(f"reading assignments failed: {exc.message}")
            if await sleep_or_stop(stop, self.poll_s):
                return
