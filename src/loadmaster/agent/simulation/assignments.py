"""The replicas assigned to the simulated nodes, followed and answered: Scheduled -> Running,
Terminating -> Terminated.

Two ways to learn about assignments. With a token that may read workloads (admin or user) one watch
stream covers every node: list the replicas, then follow ``GET /api/watch?kinds=replicas`` from the
list's revision, and list again on ``relist`` or after the stream drops. An agent token may only read
``GET /api/nodes/{name}/replicas``, so then every node is polled every ``poll_s``. Reports go through a
queue drained by a few workers; a replica already queued is not queued twice. The server refuses a
report that no longer applies (409: the replica moved on; 404: it is gone) and those are dropped: the
next list shows the truth.

Work is keyed by incarnation (``spec.incarnation``), not by name: a replacement that takes over its
replica's name (make-before-break) keeps its incarnation, so the node running it adopts it under the new
name, and the incarnation the name held before is no longer assigned: the node stops it. Every report
names its incarnation, so a late report about a replaced incarnation is refused (409), never applied to
its successor.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from loadmaster.agent.link.api import AgentApi, AgentApiError
from loadmaster.agent.link.pacing import for_each_bounded, sleep_or_stop
from loadmaster.agent.link.replica_stream import follow_replicas
from loadmaster.agent.simulation.lifecycle import next_report, replica_node, status_report
from loadmaster.agent.simulation.settings import AgentSettings
from loadmaster.manifests.replicas import incarnation_of

# Reports the server may refuse without anything being wrong: the replica changed or went away meanwhile.
_STALE_REPORT = (404, 409)


class ReplicaReporter:
    def __init__(
        self, api: AgentApi, nodes: frozenset[str], settings: AgentSettings, say: Callable[[str], None]
    ) -> None:
        self.api = api
        self.nodes = nodes
        self.settings = settings
        self.say = say
        self.reports_sent = 0
        self.stale_reports = 0
        self._queue: asyncio.Queue[tuple[str, str, str]] = asyncio.Queue()  # (name, incarnation, phase)
        self._queued: set[tuple[str, str, str]] = set()
        self.running: dict[str, str] = {}  # incarnation -> the name it runs under, on our nodes
        self._held_by: dict[str, str] = {}  # name -> the incarnation we run under it

    async def run(self, stop: asyncio.Event) -> None:
        workers = [asyncio.create_task(self._report_worker()) for _ in range(self.settings.concurrency)]
        try:
            if await follow_replicas(self.api, stop, self.say, self._consider_all, self.consider):
                self.say(
                    f"this token may not watch replicas; polling each node every {self.settings.poll_s:g}s"
                )
                await self._poll_loop(stop)
        finally:
            for worker in workers:
                worker.cancel()
            outcomes = await asyncio.gather(*workers, return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, Exception):
                raise outcome

    def consider(self, replica: Mapping[str, Any]) -> None:
        """Queue the report this replica needs from one of our nodes, if any."""
        name = (replica.get("metadata") or {}).get("name")
        if not isinstance(name, str):
            return
        incarnation = incarnation_of(replica)
        self._follow_name(name, incarnation)
        if replica_node(replica) not in self.nodes:
            return
        if incarnation in self.running:
            self._run(incarnation, name)  # adopted under its new name after a replacement
        phase = next_report(replica)
        if phase is None:
            return
        key = (name, incarnation, phase)
        if key not in self._queued:
            self._queued.add(key)
            self._queue.put_nowait(key)

    def _consider_all(self, replicas: list[dict[str, Any]]) -> None:
        for replica in replicas:
            self.consider(replica)

    def _follow_name(self, name: str, incarnation: str) -> None:
        """The name now holds ``incarnation``: any other incarnation we ran under it is unassigned, so
        it stops (the simulation has nothing to stop but its record of it)."""
        held = self._held_by.get(name)
        if held is not None and held != incarnation:
            if self.running.get(held) == name:
                del self.running[held]
            del self._held_by[name]

    def _run(self, incarnation: str, name: str) -> None:
        self.running[incarnation] = name
        self._held_by[name] = incarnation

    async def _poll_loop(self, stop: asyncio.Event) -> None:
        nodes = sorted(self.nodes)
        while True:
            answers = await for_each_bounded(nodes, self._poll_node, self.settings.concurrency)
            failures = [failure for failure in answers if failure]
            if failures:
                self.say(f"reading assignments failed for {len(failures)} node(s): {failures[0]}")
            if await sleep_or_stop(stop, self.settings.poll_s):
                return

    async def _poll_node(self, node: str) -> str | None:
        try:
            replicas = await self.api.node_replicas(node)
        except AgentApiError as exc:
            return exc.message
        for replica in replicas:
            self.consider(replica)
        return None

    async def _report_worker(self) -> None:
        while True:
            name, incarnation, phase = await self._queue.get()
            try:
                await self.api.report_status(name, status_report(phase, incarnation))
                self.reports_sent += 1
                if phase == "Running":
                    self._run(incarnation, name)
                else:
                    self.running.pop(incarnation, None)
            except AgentApiError as exc:
                if exc.status in _STALE_REPORT:
                    self.stale_reports += 1
                else:
                    # Not retried here: the next list (after a reconnect, or the next poll) queues it again.
                    self.say(f"reporting {name} {phase} failed: {exc.message}")
            finally:
                self._queued.discard((name, incarnation, phase))
