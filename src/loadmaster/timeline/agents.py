"""The simulated agents of a timeline: they register, heartbeat and report as the file says.

They call the same request functions the HTTP API calls for a real agent (``register_node``,
``heartbeat``, ``report_replica_status``): only the transport is left out. Each node's agent:

* heartbeats at once when it registers, then every ``heartbeat_interval``, while its host and its agent
  are up (``node_down`` and ``agent_down`` stop it, ``node_up`` starts it again, at once);
* starts a replica the scheduler binds to its node (reported Running and healthy) at once, or after its
  image's ``start_delay`` (reported Scheduled with reason ``pulling`` meanwhile); while its image's pulls
  fail, reports it Scheduled with reason ``image_pull_failed`` and retries every ``PULL_RETRY_S``;
* executes the replica commands the leader writes (``remove_from_routing``, ``restart``), each id once,
  and reports ``commands_done``; a replica whose health is failing is reported Running-not-healthy after
  a restart and ``degraded`` ``DEGRADED_AFTER_S`` later; ``exit`` reports the process exited;
* reports a replica told to stop (Terminating) gone at once, or after its stop grace period when the
  file said ``slow_stop``;
* after ``node_up``, reports every replica still assigned to it Running, and stops every replica no
  longer assigned to it (a replica moved away while the agent was down never runs twice);
* answers the leader's host probe at once while its host is up (even with its agent down), and never
  while it is down (the probe times out: host down).
* once given a ``pressure``, samples it at once and every ``node_status_interval`` after, while its host
  and agent are up (``report_node_status``, as a real agent's status report; not a heartbeat). When a
  Running replica shows up Running on another node (a move), its load goes with it: the old node's
  utilisation drops by the replica's footprint there and the new node's rises by its footprint there
  (footprint = request / allocatable per resource, 0.12 cpu and 0.06 memory where none is declared),
  each kept within 0..1.

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
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from loadmaster.core.resources import ADDRESSES, CPU, MEMORY, QuantityError, parse_resources
from loadmaster.core.voluntary_moves import DEFAULT_FOOTPRINT
from loadmaster.manifests import NODE, REPLICA
from loadmaster.manifests.model.node_model import allocatable_of
from loadmaster.manifests.replicas import ReplicaPhase, incarnation_of
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.errors import RequestError
from loadmaster.runtime.plane.object_cache import Cached
from loadmaster.runtime.reconciling.controller_views import last_command_id
from loadmaster.runtime.requests.writes.status_writes import (
    heartbeat,
    heartbeat_many,
    register_node,
    report_node_status,
    report_replica_status,
)
from loadmaster.timeline.replica_behaviour import (
    DEGRADED_AFTER_S,
    PULL_RETRY_S,
    ImageBehaviour,
    stop_grace_s,
)

log = structlog.get_logger(__name__)

AGENT = "agent"
RUNNING = ReplicaPhase.RUNNING.value


@dataclass(slots=True)
class SimulatedNode:
    name: str
    registration: dict[str, Any]
    host_up: bool = True
    agent_up: bool = True
    deleted: bool = False
    round_start: float = 0.0  # the instant its heartbeat schedule started (registration or node_up)
    pressure: list[float] | None = None  # [cpu, memory] utilisation once a `pressure` step set it
    sampler: asyncio.Task[None] | None = None

    @property
    def reporting(self) -> bool:
        return self.host_up and self.agent_up and not self.deleted


@dataclass(slots=True)
class SimulatedAgents:
    plane_of: Callable[[], ControlPlane]  # the current leader: agents follow a failover
    heartbeat_interval_s: float
    node_status_interval_s: float = 30.0
    nodes: dict[str, SimulatedNode] = field(default_factory=dict)
    images: dict[str, ImageBehaviour] = field(default_factory=dict)
    failing_health: set[str] = field(default_factory=set)  # replica names whose health check fails
    slow_stops: set[str] = field(default_factory=set)  # replica names that take their grace to stop
    # Nodes whose heartbeats fall on the same instants share one timer: a thousand nodes registered at 0
    # are one task waking every interval, not a thousand (the schedule is the same; the cost is not).
    _rounds: dict[float, asyncio.Task[None]] = field(default_factory=dict)
    # What each agent runs: incarnation -> (node, the name it runs under).
    running: dict[str, tuple[str, str]] = field(default_factory=dict)
    _reports: asyncio.Queue[tuple[str, str]] = field(default_factory=asyncio.Queue)
    _queued: set[tuple[str, str]] = field(default_factory=set)
    _worker: asyncio.Task[None] | None = None
    _executed: dict[str, int] = field(default_factory=dict)  # replica -> highest command id executed
    _timers: dict[tuple[str, str], asyncio.TimerHandle] = field(default_factory=dict)  # (replica, what)
    _running_on: dict[str, str] = field(default_factory=dict)  # replica -> the node it last ran on

    def start(self) -> None:
        self._worker = asyncio.create_task(self._send_reports(), name="agent-reports")

    async def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        tasks = list(self._rounds.values())
        tasks.extend(node.sampler for node in self.nodes.values() if node.sampler is not None)
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
        if after is None:  # the record is gone: whatever ran under this name has stopped
            self._executed.pop(name, None)
            for key in [key for key in self._timers if key[0] == name]:
                self._timers.pop(key).cancel()
            return
        self._follow_load(after)
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
            self._start(replica)
        elif phase == RUNNING:
            self._execute_commands(replica)
        elif phase == ReplicaPhase.TERMINATING.value:
            if replica.name in self.slow_stops:
                grace = stop_grace_s(replica.obj)
                stopped = {"phase": ReplicaPhase.TERMINATED.value}
                self._later(
                    replica.name, "stop", grace, lambda: self._queue(replica.name, stopped, incarnation)
                )
            else:
                self._queue(replica.name, {"phase": ReplicaPhase.TERMINATED.value}, incarnation)

    def _start(self, replica: Cached) -> None:
        """Pull the image and start the replica: at once, after the image's start delay, or never while
        its pulls fail (reported, and retried every PULL_RETRY_S)."""
        image = str(replica.obj.get("spec", {}).get("image") or "")
        behaviour = self.images.get(image, ImageBehaviour())
        if behaviour.pull_fails:
            message = f"{image}: pull failed (simulated registry error)"
            self._queue(
                replica.name, {"phase": "Scheduled", "reason": "image_pull_failed", "message": message}
            )
            self._retry_later(replica.name, "pull", PULL_RETRY_S)
        elif behaviour.start_delay_s > 0 and (replica.name, "start") not in self._timers:
            name = replica.name
            self._queue(name, {"phase": "Scheduled", "reason": "pulling", "message": f"{image}: pulling"})
            self._later(
                name, "start", behaviour.start_delay_s, lambda: self._queue(name, self._started(name))
            )
        elif behaviour.start_delay_s <= 0:
            self._queue(replica.name, self._started(replica.name))

    def _started(self, name: str) -> dict[str, Any]:
        """A (re)started replica: healthy at once, or not yet, and degraded a little later."""
        if name in self.failing_health:
            degraded = {"phase": RUNNING, "degraded": True}
            self._later(name, "degrade", DEGRADED_AFTER_S, lambda: self._queue(name, degraded))
            return {"phase": RUNNING, "healthy": False}
        return {"phase": RUNNING, "healthy": True}

    def _execute_commands(self, replica: Cached) -> None:
        status = replica.obj.get("status", {})
        last = last_command_id(status)
        done = max(self._executed.get(replica.name, 0), int(status.get("commands_done", 0)))
        if last <= done:
            return
        self._executed[replica.name] = last
        restarted = any(
            command.get("type") == "restart" and int(command.get("id", 0)) > done
            for command in status.get("commands") or []
        )
        report = self._started(replica.name) if restarted else {"phase": RUNNING}
        self._queue(replica.name, {**report, "commands_done": last})

    def _later(self, name: str, what: str, delay_s: float, action: Callable[[], None]) -> None:
        """Run ``action`` about ``name`` after ``delay_s`` (one pending timer per replica and ``what``)."""
        key = (name, what)
        if key in self._timers:
            self._timers.pop(key).cancel()

        def fire() -> None:
            self._timers.pop(key, None)
            action()

        self._timers[key] = asyncio.get_running_loop().call_later(delay_s, fire)

    def _retry_later(self, name: str, what: str, delay_s: float) -> None:
        """Look at ``name`` again after ``delay_s`` (a pull retry), unless a retry is already due."""
        key = (name, what)
        if key in self._timers:
            return

        def fire() -> None:
            self._timers.pop(key, None)
            cached = self.plane_of().cache.get(REPLICA, name)
            if cached is not None:
                self._answer(cached)

        self._timers[key] = asyncio.get_running_loop().call_later(delay_s, fire)

    def _queue(self, name: str, body: dict[str, Any], incarnation: str | None = None) -> None:
        """Queue a report about ``name``; it names the incarnation (by default the one the name holds
        now), so a report about a replaced incarnation is refused, never applied to its successor."""
        if incarnation is None:
            cached = self.plane_of().cache.get(REPLICA, name)
            if cached is None:
                return
            incarnation = incarnation_of(cached.obj)
        text = json.dumps({**body, "incarnation": incarnation}, sort_keys=True)
        if (name, text) not in self._queued:
            self._queued.add((name, text))
            self._reports.put_nowait((name, text))

    async def _send_reports(self) -> None:
        while True:
            name, text = await self._reports.get()
            self._queued.discard((name, text))
            body = json.loads(text)
            try:
                replica = await report_replica_status(self.plane_of(), name, body)
            except RequestError as error:
                # The replica moved on or went away meanwhile; the next change is answered anew.
                log.debug("agent report refused", replica=name, report=text, error=error.message)
                continue
            incarnation, phase = body["incarnation"], body["phase"]
            if phase == RUNNING:
                self.running[incarnation] = (replica["status"]["node_ref"], name)
            elif phase != ReplicaPhase.SCHEDULED.value:
                self.running.pop(incarnation, None)

    def _follow_load(self, replica: Cached) -> None:
        """A Running replica seen Running on another node than before takes its load with it."""
        status = replica.obj.get("status", {})
        node = status.get("node_ref")
        if status.get("phase") != ReplicaPhase.RUNNING.value or not node:
            return
        previous = self._running_on.get(replica.name)
        self._running_on[replica.name] = node
        if previous is None or previous == node:
            return
        for name, sign in ((previous, -1.0), (node, 1.0)):
            simulated = self.nodes.get(name)
            if simulated is not None and simulated.pressure is not None:
                footprint = self._footprint(replica, name)
                simulated.pressure = [
                    min(1.0, max(0.0, share + sign * part))
                    for share, part in zip(simulated.pressure, footprint, strict=True)
                ]

    def _footprint(self, replica: Cached, node: str) -> tuple[float, float]:
        cached = self.plane_of().cache.get(NODE, node)
        if cached is None:
            return DEFAULT_FOOTPRINT
        allocatable = allocatable_of(cached.obj.get("spec", {}), cached.obj.get("status", {}))
        try:
            request = parse_resources(replica.obj.get("spec", {}).get("resources"))
        except QuantityError:
            request = {}
        shares = [
            request[resource] / allocatable[resource]
            if resource in request and allocatable.get(resource)
            else default
            for resource, default in zip((CPU, MEMORY), DEFAULT_FOOTPRINT, strict=True)
        ]
        return shares[0], shares[1]

    # -- the file's side: replicas and images ---------------------------------------------------------

    def replica_health(self, name: str, passing: bool) -> None:
        """``health: failing`` reports the replica degraded at once; ``passing`` healthy at once."""
        if passing:
            self.failing_health.discard(name)
            timer = self._timers.pop((name, "degrade"), None)
            if timer is not None:
                timer.cancel()
        else:
            self.failing_health.add(name)
        if self._is_running_here(name):
            self._queue(
                name, {"phase": RUNNING, "healthy": True} if passing else {"phase": RUNNING, "degraded": True}
            )

    def replica_exit(self, name: str, code: int) -> None:
        if self._is_running_here(name):
            self._queue(name, {"phase": RUNNING, "exited": True, "exit_code": code})

    def image(self, name: str, pull_fails: bool | None, start_delay_s: float | None) -> None:
        current = self.images.get(name, ImageBehaviour())
        self.images[name] = ImageBehaviour(
            current.pull_fails if pull_fails is None else pull_fails,
            current.start_delay_s if start_delay_s is None else start_delay_s,
        )

    def _is_running_here(self, name: str) -> bool:
        cached = self.plane_of().cache.get(REPLICA, name)
        if cached is None:
            return False
        status = cached.obj.get("status", {})
        node = self.nodes.get(status.get("node_ref") or "")
        return status.get("phase") == RUNNING and node is not None and node.reporting

    # -- the file's side: nodes ------------------------------------------------------------------------------

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
            reporting = [node.name for node in members if node.reporting]  # registration order
            refused = await heartbeat_many(self.plane_of(), reporting)
            for name, error in refused.items():
                log.debug("heartbeat refused", node=name, error=error)

    async def _heartbeat(self, node: SimulatedNode) -> None:
        try:
            await heartbeat(self.plane_of(), node.name, {})
        except RequestError as error:
            log.debug("heartbeat refused", node=node.name, error=error.message)

    async def probe(self, node: str, address: str | None) -> bool:
        """The host probe (``runtime/reconciling/host_probe.py``): a host that is up answers at once
        (its agent may be down); a down or deleted host never answers, so the probe times out."""
        simulated = self.nodes.get(node)
        if simulated is not None and simulated.host_up and not simulated.deleted:
            return True
        await asyncio.Event().wait()  # no answer: the caller's timeout cancels this
        return False

    async def set_address_pool(self, name: str, size: int) -> None:
        """The node's agent registers again with an address pool of ``size`` addresses (as a real agent
        restarted with another ``--address-pool``): the server's own rule fails what no longer fits."""
        node = self.nodes[name]
        capacity = {**node.registration["capacity"], ADDRESSES: str(size)}
        reserved = {
            k: v for k, v in (node.registration.get("system_reserved") or {}).items() if k != ADDRESSES
        }
        node.registration = {**node.registration, "capacity": capacity, "system_reserved": reserved}
        await register_node(self.plane_of(), node.registration, AGENT)

    async def set_pressure(self, name: str, cpu: float, memory: float) -> None:
        """The node's utilisation from now on: sampled at once, then every node_status_interval."""
        node = self.nodes[name]
        node.pressure = [cpu, memory]
        if node.sampler is not None:
            node.sampler.cancel()
        await self._sample(node)
        node.sampler = asyncio.create_task(self._sample_every_interval(node), name=f"samples-{name}")

    async def _sample_every_interval(self, node: SimulatedNode) -> None:
        while not node.deleted:
            await asyncio.sleep(self.node_status_interval_s)
            await self._sample(node)

    async def _sample(self, node: SimulatedNode) -> None:
        if not node.reporting or node.pressure is None:
            return
        cpu, memory = node.pressure
        try:
            await report_node_status(self.plane_of(), node.name, {"pressure": {"cpu": cpu, "memory": memory}})
        except RequestError as error:
            log.debug("pressure sample refused", node=node.name, error=error.message)

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
        self.answer_all()

    def answer_all(self) -> None:
        """Every replica's agent says what it says about it now (after node_up, or an image change)."""
        for replica in sorted(self.plane_of().cache.objects[REPLICA].values(), key=lambda c: c.name):
            self._answer(replica)
