"""Run a timeline: the control plane of ``loadmaster server`` on a virtual clock, a memory store and
simulated agents, steps applied at their times, every ``expect`` judged on what the store holds.

How virtual time advances (docs/decisions.md): the run is one ``VirtualTimeLoop``; it jumps from one due
timer to the next. Before a step at time T, everything due at or before T runs, and so does the
zero-delay work it starts (writes, cache updates, the agents' answers), until nothing is ready and no
timer is due at T (``settle``); then the step runs, and the same settling follows it. Work that waits
(the 50 ms debounce, the scheduler's trickle gap) happens later, at its own time. The run ends at the
last step.

The leader is one ``ControlPlane`` on the memory store. ``leader_failover`` stops it cleanly (it resigns,
as a server stopped with SIGTERM does) and starts a new one with a new identity from the store alone:
everything leader-local is lost.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from loadmaster.core.model import SchedulerConfig
from loadmaster.core.voluntary_moves import DEFAULT_MAX_MOVES_PER_CYCLE
from loadmaster.manifests import NODE, REPLICA, Manifest, ManifestErrors, manifest_from_object
from loadmaster.runtime.config import ServerConfig
from loadmaster.runtime.control_plane import ControlPlane, ControlPlaneSettings
from loadmaster.runtime.plane.clock import SystemClock
from loadmaster.runtime.plane.errors import RequestError
from loadmaster.runtime.plane.leadership.leader_local import LocalLeaderElector
from loadmaster.runtime.plane.storage.store_layout import AUDIT
from loadmaster.runtime.requests.writes.node_removal import remove_node
from loadmaster.runtime.requests.writes.object_writes import apply_manifests, delete_object, set_cordon
from loadmaster.runtime.requests.writes.rollback import rollback_deployment
from loadmaster.runtime.wiring import settings_of as server_settings_of
from loadmaster.store.codec import decode
from loadmaster.store.memory import MemoryStore
from loadmaster.timeline.agents import SimulatedAgents
from loadmaster.timeline.config import TimelineConfig
from loadmaster.timeline.expectations import judge
from loadmaster.timeline.observe import (
    event_of,
    observe_deployments,
    observe_nodes,
    observe_replicas,
)
from loadmaster.timeline.schema import Step, Timeline
from loadmaster.timeline.virtual_loop import VirtualTimeLoop, settle

# Virtual time 0 is this instant: objects and audit entries carry real-looking timestamps.
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
USER = "admin"  # who applies, deletes and cordons in a timeline (as `loadmaster` with the admin token)


class TimelineRunError(ValueError):
    """A step that cannot run (a name that does not exist when it runs): exit 2, naming the step's path."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path, self.message = path, message


class VirtualClock(SystemClock):
    """The server's clock with one change: ``now()`` is ``EPOCH`` + the loop's (virtual) time, so stamps
    and the loop's timers agree. Waiting and intervals are the loop's own, as in the server."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def now(self) -> datetime:
        return EPOCH + timedelta(seconds=self._loop.time())


def settings_of(config: TimelineConfig, scheduler: SchedulerConfig | None = None,
                max_moves_per_cycle: int = DEFAULT_MAX_MOVES_PER_CYCLE) -> ControlPlaneSettings:  # fmt: skip
    """The server's own mapping (``runtime/wiring.py``) over a server config carrying the timeline's values:
    a timeline setting means exactly what the server setting of the same name means. ``scheduler``: the
    scheduler's settings (``loadmaster replay`` runs a timeline once per config), the timeline's staleness
    grace period kept; ``max_moves_per_cycle``: the server's setting of that name (a replay config's)."""
    values = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    grace = values.pop("staleness_grace_period_s")
    scheduling = dataclasses.replace(scheduler or SchedulerConfig(), staleness_grace_period_s=grace)
    # The decide step in-process: a timeline is deterministic over virtual time (no worker process).
    server = ServerConfig(
        store="memory",
        scheduler=scheduling,
        decide_in="thread",
        max_moves_per_cycle=max_moves_per_cycle,
        **values,
    )
    return server_settings_of(server)


@dataclass(slots=True)
class Harness:
    timeline: Timeline
    store: MemoryStore = field(default_factory=MemoryStore)
    plane: ControlPlane | None = None
    terms: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    scheduler: SchedulerConfig | None = None  # None: the defaults (settings_of)
    max_moves_per_cycle: int = DEFAULT_MAX_MOVES_PER_CYCLE  # the server's --max-moves-per-cycle
    on_leader: Callable[[ControlPlane], None] | None = None  # told of each new leader (replay records)
    _audit_seen: int = 0
    _events_judged: int = 0

    @property
    def leader(self) -> ControlPlane:
        assert self.plane is not None
        return self.plane

    async def run(self) -> dict[str, Any]:
        config = self.timeline.config
        agents = SimulatedAgents(
            lambda: self.leader, config.heartbeat_interval_s, config.node_status_interval_s
        )
        await self._start_leader(agents)
        agents.start()
        try:
            for node in self.timeline.nodes:
                await agents.register(node.name, node.body)
                if node.unschedulable:
                    await set_cordon(self.leader, node.name, True, USER)
            if self.timeline.resources:
                await self._apply(self.timeline.resources, "resources", "0s")
            await settle()
            for step in self.timeline.steps:
                await self._until(step.at_s)
                if step.expect is not None:
                    await self._judge(step)
                else:
                    await self._do(step, agents)
                    await settle()
            await self._collect_events()
        finally:
            await agents.close()
            await self.leader.close()
        return self._output()

    async def _start_leader(self, agents: SimulatedAgents) -> None:
        self.terms += 1
        loop = asyncio.get_running_loop()
        identity = f"timeline-leader-{self.terms}"
        plane = ControlPlane(
            self.store,
            LocalLeaderElector(self.store, identity, clock=loop.time),
            backend="memory",
            clock=VirtualClock(loop),
            settings=settings_of(self.timeline.config, self.scheduler, self.max_moves_per_cycle),
            host_probe=agents,
        )
        await plane.start()
        await settle()  # campaigning and recording the term take no virtual time
        if not plane.is_leader:
            raise RuntimeError(f"{identity} did not lead on a store it has to itself")
        self.plane = plane
        agents.follow(plane)
        if self.on_leader is not None:
            self.on_leader(plane)

    async def _until(self, at_s: float) -> None:
        loop = asyncio.get_running_loop()
        if at_s > loop.time():
            await asyncio.sleep(at_s - loop.time())
        await settle()

    # -- steps ----------------------------------------------------------------------------------------

    async def _do(self, step: Step, agents: SimulatedAgents) -> None:
        action, argument, where = step.action, step.argument, f"{step.path}.do.{step.action}"
        if action == "apply":
            await self._apply(argument, step.path, step.at_text)
        elif action == "delete":
            await self._request(step, delete_object(self.leader, argument["kind"], argument["name"], USER))
        elif action in ("cordon", "uncordon"):
            self._known_node(argument, where, agents, any_node=True)
            await self._request(step, set_cordon(self.leader, argument, action == "cordon", USER))
        elif action in ("node_down", "agent_down"):
            self._known_node(argument, where, agents)
            (agents.host_down if action == "node_down" else agents.agent_down)(argument)
        elif action == "node_up":
            self._known_node(argument, where, agents)
            await agents.node_up(argument)
        elif action == "add_node":
            if argument.name in agents.nodes or self.leader.cache.get(NODE, argument.name) is not None:
                raise TimelineRunError(f"{where}.name", f'node "{argument.name}" already exists')
            await agents.register(argument.name, argument.body)
            if argument.unschedulable:
                await set_cordon(self.leader, argument.name, True, USER)
        elif action == "delete_node":
            self._known_node(argument, where, agents, any_node=True)
            if argument in agents.nodes:
                agents.deleted(argument)
            await self._request(step, delete_object(self.leader, NODE, argument, USER))
        elif action == "replica":
            self._replica(argument, where, agents)
        elif action == "image":
            # A pull failing now is retried on its own schedule (every 10 s), not at once.
            agents.image(argument["name"], argument["pull_fails"], argument["start_delay_s"])
        elif action == "rollback":
            await self._request(step, rollback_deployment(self.leader, argument, USER))
        elif action == "pressure":
            self._known_node(argument.node, f"{where}.node", agents)
            await agents.set_pressure(argument.node, argument.cpu, argument.memory)
        elif action == "address_pool":
            self._known_node(argument.node, f"{where}.node", agents)
            await self._request(step, agents.set_address_pool(argument.node, argument.size))
        elif action == "remove_node":
            self._known_node(argument, where, agents, any_node=True)
            await self._request(step, remove_node(self.leader, argument, USER))
        elif action == "leader_failover":
            old = self.leader
            await old.resign()
            await old.close()
            await self._start_leader(agents)
        else:  # refused when the file was read; reaching here is a bug
            raise AssertionError(f"unhandled action {action}")

    def _replica(self, argument: dict[str, Any], where: str, agents: SimulatedAgents) -> None:
        name = argument["name"]
        if self.leader.cache.get(REPLICA, name) is None:
            raise TimelineRunError(f"{where}.name", f'unknown replica "{name}"')
        if "health" in argument:
            agents.replica_health(name, argument["health"] == "passing")
        elif "exit" in argument:
            agents.replica_exit(name, argument["exit"])
        elif argument["slow_stop"]:
            agents.slow_stops.add(name)
        else:
            agents.slow_stops.discard(name)

    def _known_node(self, name: str, where: str, agents: SimulatedAgents, any_node: bool = False) -> None:
        simulated = name in agents.nodes and not agents.nodes[name].deleted
        stored = self.leader.cache.get(NODE, name) is not None
        if not (simulated or (any_node and stored)):
            raise TimelineRunError(where, f'unknown node "{name}"')

    async def _apply(self, documents: Any, path: str, at_text: str) -> None:
        try:
            manifests: list[Manifest] = [
                manifest_from_object(doc, f"{path}[{i}]") for i, doc in enumerate(documents)
            ]
        except ManifestErrors as errors:  # checked when the file was read; kept for a clear message
            self.errors.append({"at": at_text, "step": path, "error": str(errors)})
            return
        try:
            await apply_manifests(self.leader, manifests, USER)
        except RequestError as error:
            self.errors.append({"at": at_text, "step": path, "error": error.message})

    async def _request(self, step: Step, request: Any) -> None:
        """A CLI-like request: a refusal is an ``errors`` line, as the CLI would print it."""
        try:
            await request
        except RequestError as error:
            self.errors.append({"at": step.at_text, "step": step.path, "error": error.message})

    # -- expectations -----------------------------------------------------------------------------------

    async def _collect_events(self) -> None:
        entries, _ = await self.store.list(AUDIT)
        for entry in entries:
            record = decode(entry.value)
            if record["seq"] > self._audit_seen:
                self._audit_seen = record["seq"]
                self.events.append(event_of(record, EPOCH))

    async def _judge(self, step: Step) -> None:
        assert step.expect is not None
        await self._collect_events()
        since = self.events[self._events_judged :]
        self._events_judged = len(self.events)
        cache = self.leader.cache
        observed = {
            "replicas": observe_replicas(cache),
            "deployments": observe_deployments(cache),
            "nodes": observe_nodes(cache),
            "events": since,
        }
        mismatches = judge(step.expect, observed, since)
        self.mismatches.extend(f"{step.path}: {m}" for m in mismatches)
        self.steps.append(
            {
                "at": step.at_text,
                "observed": observed,
                "expect": {"passed": not mismatches, "mismatches": mismatches},
            }
        )

    def _output(self) -> dict[str, Any]:
        return {
            "timeline": self.timeline.name,
            "steps": self.steps,
            "errors": self.errors,
            "events": self.events,
            "expect": {"passed": not self.mismatches, "mismatches": self.mismatches},
        }


def run_timeline(timeline: Timeline) -> dict[str, Any]:
    """Run ``timeline`` to its last step on a fresh virtual-time loop; the output as the spec shows it."""
    loop = VirtualTimeLoop()
    try:
        return loop.run_until_complete(Harness(timeline).run())
    finally:
        loop.close()
