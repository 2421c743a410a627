"""``loadmaster agent --name NODE``: the real node agent, running this node's replicas as processes.

It registers the machine (capacity from psutil unless given, ``probe_address`` where its endpoint
answers ``/probe`` and ``/logs``), heartbeats (with a pressure sample every ``status_interval_s``),
follows the replicas assigned to it (``AssignmentFeed``) and reconciles them once per change and
every RECONCILE_TICK_S: start what is assigned and not running, stop what is no longer assigned,
report every transition (``ReplicaSupervisor``). Work is keyed by incarnation (``key_of``).

Stopping the agent leaves its processes running: a restarted agent with the same work dir adopts them
(``RunRecords``), and reports exited those that ended while it was away. Processes recorded by an
earlier agent that nothing assigns any more are stopped once the first full list has arrived.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from loadmaster.agent.agent_http import AgentEndpoint
from loadmaster.agent.host.address_pool import AddressPool
from loadmaster.agent.host.gpu_inventory import GpuInventory
from loadmaster.agent.host.node_shape import NodeShape
from loadmaster.agent.host.pressure import PressureSampler
from loadmaster.agent.host.throughput import THROUGHPUT_EVERY_S, measure_network
from loadmaster.agent.link.api import AgentApi, AgentApiError, AgentFatalError
from loadmaster.agent.link.pacing import sleep_or_stop
from loadmaster.agent.link.retries import StopRequestedError, retrying
from loadmaster.agent.replicas.adoption import RunRecords
from loadmaster.agent.replicas.assignment_feed import AssignmentFeed
from loadmaster.agent.replicas.placement_env import missing_address, missing_devices
from loadmaster.agent.replicas.replica_launch import (
    DEFAULT_STOP_GRACE_S,
    key_of,
    name_of,
    revision_of,
    status_of,
)
from loadmaster.agent.replicas.replica_reports import ProcessTruth
from loadmaster.agent.replicas.supervisor import DEFAULT_HEALTHY_AFTER_S, ReplicaSupervisor
from loadmaster.agent.runtime.process_logs import rotate_if_large
from loadmaster.agent.runtime.protocol import Runtime, Unit
from loadmaster.manifests.timestamps import format_timestamp

DEFAULT_HEARTBEAT_S = 30.0
DEFAULT_STATUS_INTERVAL_S = 30.0  # node_status_interval: pressure samples and log rotation
# A pass runs on every change; this tick also retries reports the server refused for a passing reason.
RECONCILE_TICK_S = 1.0
# Status reports sent at once: the server writes them one by one, and 200 at once only queue there
# while the starts they follow wait for the event loop.
REPORT_CONCURRENCY = 8
_ASSIGNED_PHASES = ("Scheduled", "Running", "Terminating")


@dataclass(frozen=True, slots=True)
class NodeAgentSettings:
    name: str
    shape: NodeShape
    work_dir: Path
    heartbeat_s: float = DEFAULT_HEARTBEAT_S
    status_interval_s: float = DEFAULT_STATUS_INTERVAL_S
    poll_s: float = 1.0
    healthy_after_s: float = DEFAULT_HEALTHY_AFTER_S  # without a healthcheck: up this long = healthy
    listen_host: str = "127.0.0.1"
    listen_port: int = 0
    stop_replicas_on_exit: bool = False  # `up --real`: nothing outlives it (default: the next agent adopts)
    gpus: GpuInventory | None = None  # --gpus: this machine's GPU devices, as the operator declares them
    address_pool: AddressPool | None = None  # --address-pool: addresses for replicas with address: true


def check_work_dir(work_dir: Path) -> None:
    """AgentFatalError with one line when the work dir cannot hold replicas' directories."""
    try:
        work_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=work_dir):
            pass
    except OSError as exc:
        raise AgentFatalError(f"--work-dir {work_dir} is not writable: {exc.strerror or exc}") from None


class NodeAgent:
    def __init__(
        self, api: AgentApi, settings: NodeAgentSettings, runtime: Runtime, say: Callable[[str], None]
    ) -> None:
        self.api = api
        self.settings = settings
        self.runtime = runtime
        self.say = say
        self.records = RunRecords(settings.work_dir)
        self.feed = AssignmentFeed(api, settings.name, settings.poll_s, say)
        self.supervisors: dict[str, ReplicaSupervisor] = {}
        self.endpoint = AgentEndpoint(settings.name, self.log_directory)
        self.pressure = PressureSampler()
        self.probe_address = ""
        self.heartbeats_sent = 0
        self._orphans: dict[str, tuple[Unit, dict[str, Any]]] = {}
        self._orphan_stops: set[asyncio.Task[None]] = set()
        self._reports_in_flight = asyncio.Semaphore(REPORT_CONCURRENCY)
        self._supervised: set[str] = set()  # keys this agent has run since it started
        self._fields_server_lacks: set[str] = set()  # report fields an older server refused
        self._not_started: set[str] = set()  # keys not started for want of an address or devices

    # -- the whole run -------------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event) -> None:
        check_work_dir(self.settings.work_dir)
        self._load_records()
        port = await self.endpoint.start(self.settings.listen_host, self.settings.listen_port)
        self.probe_address = f"{self.settings.listen_host}:{port}"
        try:
            if not await self._register_until_done(stop):
                return
            self.say(
                f"registered node {self.settings.name} at {self.api.server}; endpoint {self.probe_address}; "
                f"{len(self._orphans)} running process(es) to adopt"
            )
            await self._run_loops(stop)
        finally:
            if self.settings.stop_replicas_on_exit:
                await self._stop_all()
            await asyncio.gather(*(s.close() for s in self.supervisors.values()), return_exceptions=True)
            await self.endpoint.close()

    async def _run_loops(self, stop: asyncio.Event) -> None:
        loops = [
            asyncio.create_task(self._heartbeat_loop(stop), name="heartbeats"),
            asyncio.create_task(self.feed.run(stop), name="assignments"),
            asyncio.create_task(self._reconcile_loop(stop), name="reconcile"),
        ]
        stopping = asyncio.create_task(stop.wait(), name="stop")
        done, _ = await asyncio.wait([stopping, *loops], return_when=asyncio.FIRST_COMPLETED)
        for task in [stopping, *loops]:
            task.cancel()
        await asyncio.wait([stopping, *loops])
        for task in done:
            error = None if task is stopping or task.cancelled() else task.exception()
            if error is not None:
                raise error

    def _load_records(self) -> None:
        for key, record in self.records.load().items():
            unit = self.runtime.adopt(record)
            if unit is None:
                self.records.forget(key)  # it ended while no agent watched; the store still says Running
            else:
                self._orphans[key] = (unit, record)

    # -- registration and heartbeats -----------------------------------------------------------------

    def _registration(self) -> dict[str, Any]:
        body = self.settings.shape.registration(self.settings.name)
        gpus, pool = self.settings.gpus, self.settings.address_pool
        if gpus is not None:
            body["capacity"].update(gpus.capacity())
            body.update(gpus.registration_fields())
        if pool is not None:
            body["capacity"].update(pool.capacity())
        body["probe_address"] = self.probe_address
        body["agent"] = {
            "driver": self.runtime.driver,
            "limits": self.runtime.limits,
            "work_dir": str(self.settings.work_dir),
        }
        body["pressure"] = self._pressure()
        return body

    def _pressure(self) -> dict[str, Any]:
        return {**self.pressure.sample(), "at": format_timestamp(datetime.now(UTC))}

    async def _register_until_done(self, stop: asyncio.Event) -> bool:
        """True once registered; False if asked to stop first; AgentFatalError if refused (a 4xx)."""

        def worth_retrying(error: BaseException) -> bool:
            return isinstance(error, AgentApiError) and (error.status is None or error.status >= 500)

        def on_retry(error: BaseException | None, seconds: float) -> None:
            message = error.message if isinstance(error, AgentApiError) else str(error)
            self.say(f"cannot reach the server at {self.api.server}: {message}; retrying in {seconds:.1f}s")

        try:
            # the registration is made afresh for each try (its pressure sample is of that moment)
            await retrying(stop, worth_retrying, on_retry)(lambda: self.api.register(self._registration()))
        except StopRequestedError:
            return False
        except AgentApiError as exc:
            raise AgentFatalError(
                f"the server refused to register node {self.settings.name}: {exc.message}"
            ) from exc
        return True

    async def _heartbeat_loop(self, stop: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        next_status = loop.time() + self.settings.status_interval_s
        next_network = loop.time()  # measured with the first heartbeat, then every THROUGHPUT_EVERY_S
        while not await sleep_or_stop(stop, min(self.settings.heartbeat_s, self.settings.status_interval_s)):
            body: dict[str, Any] = {}
            if loop.time() >= next_status:
                next_status = loop.time() + self.settings.status_interval_s
                body["pressure"] = self._pressure()
                for supervisor in self.supervisors.values():
                    rotate_if_large(supervisor.directory)
            if loop.time() >= next_network:
                next_network = loop.time() + THROUGHPUT_EVERY_S
                network = await self._network()
                if network is not None:
                    body["network"] = network
            try:
                await self.api.heartbeat(self.settings.name, body)
                self.heartbeats_sent += 1
            except AgentApiError as exc:
                if exc.status in (401, 403):
                    raise AgentFatalError(f"heartbeat refused: {exc.message}") from exc
                if exc.status == 404:
                    self.say(f"node {self.settings.name} is unknown to the server; registering it again")
                    await self._register_until_done(stop)
                else:
                    self.say(f"heartbeat failed: {exc.message}")

    async def _network(self) -> dict[str, Any] | None:
        try:
            return await measure_network(self.api)
        except AgentApiError as exc:
            self.say(f"measuring throughput failed: {exc.message}")
            return None

    # -- reconciling ---------------------------------------------------------------------------------

    async def _reconcile_loop(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.feed.changed.wait(), timeout=RECONCILE_TICK_S)
            self.feed.changed.clear()
            if self.feed.listed:
                self.reconcile()

    def reconcile(self) -> None:
        desired = {
            key_of(replica): replica
            for replica in self.feed.replicas.values()
            if status_of(replica).get("phase") in _ASSIGNED_PHASES
        }
        for key, supervisor in list(self.supervisors.items()):
            replica = desired.get(key)
            if replica is None or revision_of(replica) != supervisor.revision:
                supervisor.unassign()  # deleted, moved, lost, or superseded by a new spec revision
            else:
                supervisor.consider(replica)
                if status_of(replica).get("phase") == "Terminating":
                    supervisor.begin_stop()
            if supervisor.finished:
                del self.supervisors[key]
        for key, replica in desired.items():
            if key not in self.supervisors and not self._not_startable(key, replica):
                self.supervisors[key] = self._supervise(key, replica)
        for key, (unit, record) in self._orphans.items():
            self.say(f"stopping pid {unit.pid} ({record.get('replica')}): no longer assigned to this node")
            task = asyncio.ensure_future(self._stop_orphan(key, unit, record))
            self._orphan_stops.add(task)
            task.add_done_callback(self._orphan_stops.discard)
        self._orphans.clear()

    def _not_startable(self, key: str, replica: dict[str, Any]) -> bool:
        """A replica that asks for an address this agent cannot give, or for GPUs without devices on
        record, is not started (said once): past the pool, the server fails it (subnet_pool_exhausted)
        and a process adopted for it is stopped; devices come with the next cycle, and it starts then."""
        problem = missing_address(replica, self.settings.address_pool)
        if problem is None and key not in self._orphans:  # a running process keeps running meanwhile
            problem = missing_devices(replica)
        if problem is not None and key not in self._not_started:
            self._not_started.add(key)
            self.say(f"not starting {name_of(replica)}: {problem}")
        return problem is not None

    def _supervise(self, key: str, replica: dict[str, Any]) -> ReplicaSupervisor:
        supervisor = ReplicaSupervisor(
            replica,
            self.settings.name,
            self.settings.work_dir,
            self.runtime,
            self.records,
            self._report,
            self.settings.healthy_after_s,
            self.settings.address_pool,
        )
        orphan = self._orphans.pop(key, None)
        adopted = orphan[0] if orphan else None
        phase = status_of(replica).get("phase")
        if phase == "Terminating" and adopted is None:
            supervisor.stopping = True
            supervisor.truth = ProcessTruth(state="stopped", message="nothing was running on this node")
            supervisor.kick()
        elif adopted is not None:
            supervisor.begin(adopted=adopted)
        else:
            # Running with no process: it ended while no agent watched, unless this agent stopped it
            # itself to start a new revision of it.
            supervisor.begin(vanished=phase == "Running" and key not in self._supervised)
        self._supervised.add(key)
        return supervisor

    async def _stop_all(self) -> None:
        """Every replica stopped with its own signal and grace period (all at once, so the longest grace
        bounds the wait), and its adoption record dropped."""
        for supervisor in self.supervisors.values():
            supervisor.assigned = False  # the server is not told: the node is going away with them
            supervisor.begin_stop()
        await asyncio.gather(*(s.stopped() for s in self.supervisors.values()), return_exceptions=True)

    async def _stop_orphan(self, key: str, unit: Unit, record: dict[str, Any]) -> None:
        signal_number = int(record.get("stop_signal", signal.SIGTERM))
        await self.runtime.stop(unit, signal_number, float(record.get("stop_grace_s", DEFAULT_STOP_GRACE_S)))
        self.records.forget(key)

    async def _report(self, name: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """The replica as stored after the report; None when it was not accepted (sent again later).

        An agent newer than its server may send fields the server does not know: those are dropped from
        then on (said once), so the phase and health still get through."""
        for _ in range(2):
            sent = {k: v for k, v in body.items() if k not in self._fields_server_lacks}
            try:
                async with self._reports_in_flight:
                    return await self.api.report_status(name, sent)
            except AgentApiError as exc:
                lacking = set(exc.unknown_fields) - {"phase"} - self._fields_server_lacks
                if exc.status == 422 and lacking:
                    self.say(
                        f"the server does not know report field(s) {', '.join(sorted(lacking))}; not sent"
                    )
                    self._fields_server_lacks |= lacking
                    continue
                if exc.status not in (404, 409):
                    self.say(f"reporting {name} failed: {exc.message}")
                return None
        return None

    def log_directory(self, replica: str) -> Path | None:
        for supervisor in self.supervisors.values():
            if supervisor.replica.get("metadata", {}).get("name") == replica:
                return supervisor.directory
        directory = self.settings.work_dir / "replicas" / replica
        return (
            directory
            if directory.is_dir() and os.sep not in replica and replica not in ("", ".", "..")
            else None
        )
