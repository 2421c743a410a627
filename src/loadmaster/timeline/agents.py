"""The simulated agents of a timeline: they register, heartbeat and report as the file says.

They call the same request functions the HTTP API calls for a real agent (``register_node``,
``heartbeat``, ``report_replica_status``): only the transport is left out. Each node's agent:

* heartbeats at once when it registers, then every ``heartbeat_interval``, while its host and its agent
  are up (``node_down`` and ``agent_down`` stop it, ``node_up`` starts it again, at once);
* starts a replica the scheduler binds to its node at once (reported Running), and reports a replica
  told to stop (Terminating) gone at once (Terminated);
* after ``node_up``, reports every replica still assigned to it Running, and stops every replica no
  longer assigned to it (a replica moved away while the agent was down never runs twice).

Work is keyed by incarnation (``spec.incarnation``), not by name: each agent keeps the incarnations it
runs; a name that comes to hold another incarnation (a replacement took it over) or goes away stops the
incarnation it held, and the incarnation that took the name over keeps running under it (adopted).
Every report names its incarnation, so a report about a replaced incarnation is refused, never applied
to its successor.

Replica reports are queued per replica and sent in the order they were queued, so the run is the same
every time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from loadmaster.manifests import REPLICA
from loadmaster.manifests.replicas import ReplicaPhase, incarnation_of
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.errors import RequestError
from loadmaster.runtime.plane.object_cache import Cached
from loadmaster.runtime.requests.status_writes import heartbeat, register_node, report_replica_status

log = structlog.get_logger(__name__)

AGENT = "agent"


@dataclass(slots=True)
class SimulatedNode:
    name: str
    registration: dict[str, Any]
    host_up: bool = True
    agent_up: bool = True
    deleted: bool = False
    round_start: float = 0.0  # the instant its heartbeat schedule started (registration or node_up)

    @property
    def reporting(self) -> bool:
        return self.host_up and self.agent_up and not self.deleted


@dataclass(slots=True)
class SimulatedAgents:
    plane_of: Callable[[], ControlPlane]  # the current leader: agents follow a failover
    heartbeat_interval_s: float
    nodes: dict[str, SimulatedNode] = field(default_factory=dict)
    # Nodes whose heartbeats fall on the same instants share one timer: a thousand nodes registered at 0
    # are one task waking every interval, not a thousand (the schedule is the same; the cost is not).
    _rounds: dict[float, asyncio.Task[None]] = field(default_factory=dict)
    # What each agent runs: incarnation -> (node, the name it runs under).
    running: dict[str, tuple[str, str]] = field(default_factory=dict)
    _reports: asyncio.Queue[tuple[str, str, str]] = field(default_factory=asyncio.Queue)
    _queued: set[tuple[str, str, str]] = field(default_factory=set)
    _worker: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._worker = asyncio.create_task(self._send_reports(), name="agent-reports")

    async def close(self) -> None:
        tasks = list(self._rounds.values())
        if self._worker is not None:
            tasks.append(self._worker)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- the control plane's side ---------------------------------------------------------------------

    def follow(self, plane: ControlPlane) -> None:
        """Listen to ``plane``'s replica changes (called for the first leader and after each failover)."""
        plane.cache.add_listener(self._on_change)

    def _on_change(self, kind: str, name: str, before: Cached | None, after: Cached | None) -> None:
        if kind != REPLICA:
            return
        if before is not None:
            held = incarnation_of(before.obj)
            if (after is None or incarnation_of(after.obj) != held) and not self._assigned(held, before):
                self._stop(held, name)
        if after is not None:
            self._answer(after)

    def _assigned(self, incarnation: str, before: Cached) -> bool:
        """Whether a stored replica still holds ``incarnation``: a replacement's object moved to the name
        it replaces keeps its incarnation, and the agent running it adopts it there."""
        replaces = before.obj.get("spec", {}).get("replaces")
        holder = self.plane_of().cache.get(REPLICA, replaces) if replaces else None
        return holder is not None and incarnation_of(holder.obj) == incarnation

    def _stop(self, incarnation: str, name: str) -> None:
        """The incarnation is no longer assigned: its agent stops it (gone at once, in this world)."""
        if self.running.get(incarnation, ("", ""))[1] == name:
            del self.running[incarnation]

    def _answer(self, replica: Cached) -> None:
        """Queue what this replica's agent says about it now, if anything; adopt an incarnation the
        agent runs that now goes by this name."""
        status = replica.obj.get("status", {})
        node = self.nodes.get(status.get("node_ref") or "")
        if node is None or not node.reporting:
            return
        incarnation = incarnation_of(replica.obj)
        if incarnation in self.running:
            self.running[incarnation] = (node.name, replica.name)
        phase = status.get("phase")
        if phase == ReplicaPhase.SCHEDULED.value:
            self._queue(replica.name, incarnation, ReplicaPhase.RUNNING.value)
        elif phase == ReplicaPhase.TERMINATING.value:
            self._queue(replica.name, incarnation, ReplicaPhase.TERMINATED.value)

    def _queue(self, name: str, incarnation: str, phase: str) -> None:
        if (name, incarnation, phase) not in self._queued:
            self._queued.add((name, incarnation, phase))
            self._reports.put_nowait((name, incarnation, phase))

    async def _send_reports(self) -> None:
        while True:
            name, incarnation, phase = await self._reports.get()
            self._queued.discard((name, incarnation, phase))
            body = {"phase": phase, "incarnation": incarnation}
            try:
                replica = await report_replica_status(self.plane_of(), name, body)
            except RequestError as error:
                # The replica moved on or went away meanwhile; the next change is answered anew.
                log.debug("agent report refused", replica=name, phase=phase, error=error.message)
                continue
            if phase == ReplicaPhase.RUNNING.value:
                self.running[incarnation] = (replica["status"]["node_ref"], name)
            else:
                self.running.pop(incarnation, None)

    # -- the file's side ------------------------------------------------------------------------------

    async def register(self, name: str, registration: dict[str, Any]) -> None:
        node = SimulatedNode(name, registration)
        self.nodes[name] = node
        await register_node(self.plane_of(), registration, AGENT)
        self._join_round(node)

    def _join_round(self, node: SimulatedNode) -> None:
        """Heartbeat ``node`` every interval from now on, with every node that started at this instant."""
        start = asyncio.get_running_loop().time()
        node.round_start = start
        if start not in self._rounds:
            self._rounds[start] = asyncio.create_task(self._round(start), name=f"heartbeats-{start}")

    async def _round(self, start: float) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_interval_s)
            members = [n for n in self.nodes.values() if n.round_start == start]
            if not members:
                del self._rounds[start]
                return
            for node in members:  # registration order
                if node.reporting:
                    await self._heartbeat(node)

    async def _heartbeat(self, node: SimulatedNode) -> None:
        try:
            await heartbeat(self.plane_of(), node.name, {})
        except RequestError as error:
            log.debug("heartbeat refused", node=node.name, error=error.message)

    def host_down(self, name: str) -> None:
        self.nodes[name].host_up = False

    def agent_down(self, name: str) -> None:
        self.nodes[name].agent_up = False

    def deleted(self, name: str) -> None:
        self.nodes[name].deleted = True

    async def node_up(self, name: str) -> None:
        """Host and agent back: heartbeat at once and every interval after; catch up on the replicas."""
        node = self.nodes[name]
        node.host_up = node.agent_up = True
        await self._heartbeat(node)
        self._join_round(node)
        replicas = sorted(self.plane_of().cache.objects[REPLICA].values(), key=lambda c: c.name)
        assigned = {
            incarnation_of(c.obj) for c in replicas if c.obj.get("status", {}).get("node_ref") == name
        }
        for incarnation, (node_name, _) in list(self.running.items()):
            if node_name == name and incarnation not in assigned:
                del self.running[incarnation]  # moved away while the agent was down: never runs twice
        for replica in replicas:
            self._answer(replica)
