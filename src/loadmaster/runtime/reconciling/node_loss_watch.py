"""The leader's side of node loss: probes in flight, their answers, and when the next stage is due.

``controllers/nodes/node_loss.py`` decides; this runs what it asks for. A probe runs as its own task, bounded
by the probe timeout on the control plane's clock (a virtual one in a timeline), so a pass never waits
for a host; its answer wakes the controller loop, whose next pass acts on it. Everything here is
leader-local and may be lost with the term: the stages are read from the nodes' stored status, and a
probe that was in flight is simply started again by the next leader.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime

import structlog

from loadmaster.controllers.changes import Change
from loadmaster.controllers.nodes.node_loss import (
    AGENT_DOWN,
    HOST_DOWN,
    NodeLossSettings,
    ProbeAnswer,
    reconcile_node_loss,
)
from loadmaster.controllers.views import NodeView, ReplicaView, ServiceView
from loadmaster.runtime.plane.clock import Clock
from loadmaster.runtime.reconciling.host_probe import HostProbe

log = structlog.get_logger(__name__)


class NodeLossWatch:
    def __init__(
        self, probe: HostProbe, settings: NodeLossSettings, clock: Clock, wake: Callable[[], None]
    ) -> None:
        self._probe = probe
        self.settings = settings
        self._clock = clock
        self._wake = wake
        self._answers: dict[str, ProbeAnswer] = {}
        self._in_flight: dict[str, asyncio.Task[None]] = {}
        self.next_due: datetime | None = None
        self._answered = False

    def is_due(self, now: datetime) -> bool:
        """Whether a pass must look at node loss now: a stage is due, or a probe answered."""
        return self._answered or (self.next_due is not None and self.next_due <= now)

    def plan(
        self,
        nodes: Sequence[NodeView],
        replicas_on: Mapping[str, Sequence[ReplicaView]],
        services: Mapping[tuple[str, str], ServiceView],
        now: datetime,
    ) -> list[Change]:
        self._answered = False
        plan = reconcile_node_loss(nodes, replicas_on, services, self._answers, now, self.settings)
        self.next_due = plan.next_due
        by_name = {node.name: node for node in nodes}
        for name in plan.probes:
            node = by_name[name]
            if name not in self._in_flight and node.not_ready_at is not None:
                self._start(node.name, node.not_ready_at, node.probe_address)
        # An answer is kept until the node's status holds it (or the node is no longer NotReady).
        stored = {node.name for node in nodes if node.probe is not None or node.not_ready_at is None}
        for name in stored & self._answers.keys():
            del self._answers[name]
        return plan.changes

    def _start(self, name: str, not_ready_at: datetime, address: str | None) -> None:
        self._in_flight[name] = asyncio.create_task(
            self._run_probe(name, not_ready_at, address), name=f"probe-{name}"
        )

    async def _run_probe(self, name: str, not_ready_at: datetime, address: str | None) -> None:
        answered = asyncio.Event()
        host_up = False

        async def ask() -> None:
            nonlocal host_up
            host_up = await self._probe.probe(name, address)
            answered.set()

        asking = asyncio.create_task(ask(), name=f"probe-{name}-request")
        try:
            in_time = await self._clock.wait(answered, self.settings.probe_timeout_s)
        finally:
            asking.cancel()
            await asyncio.gather(asking, return_exceptions=True)
            self._in_flight.pop(name, None)
        answer = AGENT_DOWN if in_time and host_up else HOST_DOWN
        log.info("node probed", node=name, answer=answer)
        self._answers[name] = ProbeAnswer(not_ready_at, answer, self._clock.now())
        self._answered = True
        self._wake()

    def close(self) -> None:
        for task in self._in_flight.values():
            task.cancel()
        self._in_flight.clear()


def replicas_by_node(replicas: Iterable[ReplicaView], nodes: Iterable[str]) -> dict[str, list[ReplicaView]]:
    """The replicas placed on each of ``nodes``."""
    wanted = set(nodes)
    by_node: dict[str, list[ReplicaView]] = {name: [] for name in wanted}
    for replica in replicas:
        if replica.node_ref in wanted:
            by_node[replica.node_ref].append(replica)
    return by_node
