"""The control plane: the store, the object cache, leadership, and the leader's two loops, as one object
the API (``api.app.create_app``) and the server wiring use.

Every server runs the cache (reads, ``why``, ``preview``, auth). Only the leader runs the scheduler
service and the controller loop, and only the leader writes: ``write_fence()`` hands the current
term's fence to a write, or raises ``NotLeaderError`` naming the leader. When a term ends (lost,
expired, resigned) both loops stop at once and the server campaigns again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import structlog

from loadmaster.controllers.deployments.rollout_plan import DEFAULT_STEP_TIMEOUT_S
from loadmaster.controllers.nodes.node_loss import NodeLossSettings
from loadmaster.controllers.restarts import DEFAULT_RESTART_BUDGET
from loadmaster.core.heartbeat import HEARTBEAT_FRESH_FOR
from loadmaster.core.limits import AdmissionLimits
from loadmaster.core.model import SchedulerConfig
from loadmaster.core.search_backoff import SearchBackoff, SearchBackoffLedger
from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.runtime.plane.audit import AuditEntry, AuditLog
from loadmaster.runtime.plane.clock import Clock, SystemClock
from loadmaster.runtime.plane.errors import NotLeaderError
from loadmaster.runtime.plane.leadership.leader import LeaderElector
from loadmaster.runtime.plane.leadership.leader_local import LeaderKeyTakenError
from loadmaster.runtime.plane.metrics import ControlPlaneMetrics
from loadmaster.runtime.plane.move_ledger import MoveLedger
from loadmaster.runtime.plane.object_cache import ObjectCache
from loadmaster.runtime.plane.pass_loop import PassTiming
from loadmaster.runtime.plane.status_counts import StatusCounts
from loadmaster.runtime.plane.storage.store_layout import member_key
from loadmaster.runtime.rebalancing.rebalancer import Rebalancer, RebalanceSettings
from loadmaster.runtime.reconciling.cleanup import Cleanup, CleanupTiming
from loadmaster.runtime.reconciling.controller_loop import ControllerLoop
from loadmaster.runtime.reconciling.host_probe import HostProbe, HttpHostProbe
from loadmaster.runtime.reconciling.owner_errors import OwnerErrors
from loadmaster.runtime.reconciling.writes.voluntary_move_writes import move_start_ops
from loadmaster.runtime.scheduling.deciding.deciders import decider_for
from loadmaster.runtime.scheduling.model.capacity_reads import CapacityReads
from loadmaster.runtime.scheduling.model.scheduling_model import SchedulingModel
from loadmaster.runtime.scheduling.model.skipped_objects import SkippedObjects
from loadmaster.runtime.scheduling.restart_nodes import nodes_turning_away
from loadmaster.runtime.scheduling.scale_up.scale_up_webhook import ScaleUpWebhook
from loadmaster.runtime.scheduling.scheduler_service import SchedulerService, SchedulerStats
from loadmaster.runtime.scheduling.timeslot_windows import DEFAULT_TIMESLOT_LEAD
from loadmaster.store.codec import decode, encode
from loadmaster.store.interface import Fence, FencedError, Store, StoreError

log = structlog.get_logger(__name__)


# A write that arrives while this server's new term is being recorded waits this long for it.
TERM_START_WAIT_S = 2.0
# A server stopping cleanly gives its lease back within this long, or leaves it to expire (an
# unreachable store must not keep a stopping process alive).
HAND_OVER_TIMEOUT_S = 2.0


@dataclass(frozen=True, slots=True)
class ControlPlaneSettings:
    loops: PassTiming = field(default_factory=PassTiming)  # the scheduler's and the controllers'
    # A node not heard from for this long is NotReady (core.heartbeat; the seeds' 90 s).
    not_ready_after_s: float = HEARTBEAT_FRESH_FOR.total_seconds()
    scheduler_config: SchedulerConfig = field(default_factory=SchedulerConfig)
    # After resigning, wait this long before campaigning again, so a standby can take over.
    resign_pause_s: float = 1.0
    # After a failed campaign (the store is unreachable), wait this long before the next one.
    campaign_retry_s: float = 1.0
    admission: AdmissionLimits = field(default_factory=AdmissionLimits)  # core/limits.py
    # What the leader does about a node that stays NotReady (controllers/nodes/node_loss.py).
    node_loss: NodeLossSettings = field(default_factory=NodeLossSettings)
    # Restarts of a failing replica before it is Failed (controllers/restarts.py); per service
    # `restart_budget` overrides it.
    restart_budget: int = DEFAULT_RESTART_BUDGET
    # How often the leader deletes ended records, and how long they are kept (LRS K2).
    cleanup: CleanupTiming = field(default_factory=CleanupTiming)
    # A time-slot's replicas are placed from this long before its start (LRS K3: 35 min).
    timeslot_lead_s: float = DEFAULT_TIMESLOT_LEAD.total_seconds()
    scale_up_webhook: str | None = None  # new scale-up requests are POSTed here (scale_up_webhook.py)
    # A rollout step whose replacement is not Running and healthy by then aborts the rollout (issue 15);
    # a service's rollout.step_timeout overrides it.
    rollout_step_timeout_s: float = DEFAULT_STEP_TIMEOUT_S
    rebalance: RebalanceSettings = field(default_factory=RebalanceSettings)  # the pressure rebalancer
    # Graceful node removal: a replica whose replacement is not Running by then aborts it (the seeds' 5 min).
    drain_timeout_s: float = 300.0
    # Where a cycle's decide step runs (runtime/scheduling/deciding/deciders.py): "process" for a server (a
    # long cycle cannot starve the event loop), "thread" here, for tests and the timeline harness.
    decide_in: str = "thread"
    # The failed-search backoff of the evicting actions (core/search_backoff.py; off by default).
    search_backoff: SearchBackoff = field(default_factory=SearchBackoff)


@dataclass(slots=True)
class LeadershipInfo:
    since: str | None = None
    fence_revision: int | None = None
    terms: int = 0


class ControlPlane:
    def __init__(
        self,
        store: Store,
        elector: LeaderElector,
        *,
        backend: str,
        data_dir: Path | None = None,
        url: str | None = None,
        clock: Clock | None = None,
        settings: ControlPlaneSettings | None = None,
        host_probe: HostProbe | None = None,
    ) -> None:
        self.store = store
        self.host_probe = host_probe or HttpHostProbe()  # asks a NotReady node's host whether it is up
        self.elector = elector
        self.backend = backend
        self.data_dir = data_dir
        self.url = url
        self.clock = clock or SystemClock()
        self.settings = settings or ControlPlaneSettings()
        self.metrics = ControlPlaneMetrics()
        self.cache = ObjectCache(store)
        self.status_counts = StatusCounts(self.cache)  # replicas by phase, nodes by state (stats)
        self.audit = AuditLog(store, self.clock)
        self.model: SchedulingModel | None = None
        self.scheduler: SchedulerService | None = None
        self.controllers: ControllerLoop | None = None
        self.rebalancer: Rebalancer | None = None
        self.leadership = LeadershipInfo()
        self.scheduler_stats = SchedulerStats()
        webhook_url = self.settings.scale_up_webhook
        self.scale_up_webhook = ScaleUpWebhook(webhook_url) if webhook_url else None  # outlives a term
        # The decide step's runner: a worker process outlives a term (the next term's cycles reuse it).
        self.decider = decider_for(self.settings.decide_in, self.metrics.decision_worker_restarts.inc)
        self.closing = asyncio.Event()
        self._term_ready = False
        self._resigned = False
        self._leading: asyncio.Task[None] | None = None

    @property
    def identity(self) -> str:
        return self.elector.identity

    async def start(self, *, run_loops: bool = True) -> None:
        """Load the cache and start leading. ``run_loops=False`` (tests with a fake clock) takes the
        leadership once and builds the scheduler and controllers without running them: the caller
        drives ``scheduler.reconcile_once()`` and ``controllers.reconcile_once()`` itself."""
        await self.cache.start()
        skipped = SkippedObjects(self.metrics.skipped_objects)
        self.model = SchedulingModel(
            self.cache,
            self.settings.scheduler_config,
            skipped,
            timedelta(seconds=self.settings.not_ready_after_s),
            timedelta(seconds=self.settings.timeslot_lead_s),
            CapacityReads(self.metrics.store_capacity_fetches),
        )
        if self.url:
            record = {"url": self.url, "started_at": format_timestamp(self.clock.now())}
            await self.store.put(member_key(self.identity), encode(record))
        if run_loops:
            self._leading = asyncio.create_task(self._lead(), name="leadership")
        else:
            await self.elector.campaign()
            await self._begin_term()

    async def wait_leading(self, timeout_s: float) -> bool:
        """True once this server leads and can write (False after ``timeout_s``)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not self.is_leader:
            if loop.time() >= deadline or self._leading is None or self._leading.done():
                return False
            await asyncio.sleep(0.01)
        return True

    async def wait_settled(self, timeout_s: float) -> None:
        """Return once this server leads or knows another one does (or after ``timeout_s``)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not self.is_leader and loop.time() < deadline:
            if await self.elector.leader_id() not in (None, self.identity):
                return
            await asyncio.sleep(0.02)

    @property
    def is_leader(self) -> bool:
        return self._term_ready and self.elector.is_leader

    async def close(self) -> None:
        self.closing.set()
        if self._leading is not None:
            self._leading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._leading
        for service in (self.scheduler, self.controllers, self.rebalancer):
            if service is not None:  # built by start(run_loops=False)
                service.close()
        if self.model is not None:
            self.model.close()
        if self.scale_up_webhook is not None:
            await self.scale_up_webhook.close()
        await self.cache.close()
        await asyncio.to_thread(self.decider.close)  # stops a worker process: none outlives the server

    # -- writes ---------------------------------------------------------------------------------

    async def write_fence(self) -> Fence:
        """The fence for a write now; NotLeaderError if this server does not lead."""
        if self.elector.is_leader and not self._term_ready:
            await self.wait_leading(TERM_START_WAIT_S)  # just elected: the term is being recorded
        if self.is_leader:
            return self.elector.fence
        leader = await self.elector.leader_id()
        raise NotLeaderError(leader, await self.member_url(leader))

    async def member_url(self, identity: str | None) -> str | None:
        if identity is None:
            return None
        entry = await self.store.get(member_key(identity))
        return str(decode(entry.value).get("url")) if entry is not None else None

    def trigger_reconcile(self) -> bool:
        if self.scheduler is None:
            return False
        self.scheduler.trigger()
        return True

    async def resign(self) -> None:
        self._resigned = True
        await self.elector.resign()

    async def hand_over(self) -> None:
        """Stop leading for good (the server is stopping): resign, so a standby leads at once instead
        of waiting out the lease's TTL. Best effort: a store that does not answer within
        HAND_OVER_TIMEOUT_S leaves the lease to expire by itself."""
        self.closing.set()  # no new campaign after this term
        if not self.elector.is_leader:
            return
        try:
            async with asyncio.timeout(HAND_OVER_TIMEOUT_S):
                await self.resign()
        except (StoreError, TimeoutError) as error:
            log.warning("could not resign while stopping", error=f"{type(error).__name__}: {error}")
            return
        log.info("resigned: stopping", identity=self.identity)

    # -- leadership -----------------------------------------------------------------------------

    async def _lead(self) -> None:
        while not self.closing.is_set():
            try:
                await self.elector.campaign()
                await self._serve_term()
            except (StoreError, LeaderKeyTakenError) as error:
                # Unreachable store, or another writer took the leader key: step back and try again.
                log.warning("leadership attempt failed", error=f"{type(error).__name__}: {error}")
                await self.clock.sleep(self.settings.campaign_retry_s)
                continue
            if self._resigned:
                self._resigned = False
                await self.clock.sleep(self.settings.resign_pause_s)

    async def _begin_term(self) -> Fence:
        """Record the new term and build the leader's scheduler and controllers (not yet running)."""
        fence = self.elector.fence
        assert self.model is not None
        await self.audit.resume()
        previous = self.leadership.since
        self.leadership = LeadershipInfo(
            format_timestamp(self.clock.now()), fence.create_revision, self.leadership.terms + 1
        )
        entry = AuditEntry(
            "leadership",
            self.identity,
            "leader",
            f"{self.identity} leads",
            {"fence_revision": fence.create_revision, "previous_term_since": previous},
        )
        await self.store.txn(self.audit.ops([entry]), fence)
        self._term_ready = True
        self.metrics.is_leader.set(1)
        log.info("leading", identity=self.identity, fence_revision=fence.create_revision)
        ledger = MoveLedger()  # leader-local: one per term, shared by consolidation and the rebalancer
        backoff_settings = self.settings.search_backoff  # leader-local as well (core/search_backoff.py)
        backoff = SearchBackoffLedger(backoff_settings) if backoff_settings.enabled else None
        move_deadline = timedelta(seconds=self.settings.rebalance.move_deadline_s)
        self.scheduler = SchedulerService(
            self.store,
            self.cache,
            self.model,
            self.audit,
            self.metrics,
            self.clock,
            lambda: fence,
            self.settings.loops,
            self.scheduler_stats,
            self.scale_up_webhook,
            ledger=ledger,
            backoff=backoff,
            start_move=lambda replica, node, now: move_start_ops(
                self.cache, replica, node, "consolidate", now + move_deadline, now
            ),
            decider=self.decider,
        )
        self.controllers = ControllerLoop(
            self.store,
            self.cache,
            self.clock,
            lambda: fence,
            self.settings.loops,
            timedelta(seconds=self.settings.not_ready_after_s),
            self.audit,
            owner_errors=OwnerErrors(self.metrics.controller_errors),
            node_loss=self.settings.node_loss,
            host_probe=self.host_probe,
            restart_budget=self.settings.restart_budget,
            rollout_step_timeout_s=self.settings.rollout_step_timeout_s,
            restart_node_check=self._restart_node_check,
        )
        self.rebalancer = Rebalancer(
            self.store,
            self.cache,
            self.audit,
            self.metrics,
            self.clock,
            lambda: fence,
            self.settings.rebalance,
            start_move=lambda move, now: move_start_ops(
                self.cache, move.replica, move.dst, "rebalance", now + move_deadline, now
            ),
            ledger=ledger,
        )
        return fence

    def _restart_node_check(self, names: Sequence[str]) -> dict[str, str]:
        """The controllers' question before a restart in place, answered from the scheduler's model."""
        if self.model is None:
            return {}
        return nodes_turning_away(self.model, names, self.clock.now())

    async def _serve_term(self) -> None:
        await self._begin_term()
        assert self.scheduler is not None and self.controllers is not None and self.rebalancer is not None
        fence = self.elector.fence
        cleanup = Cleanup(self.store, self.clock, lambda: fence, self.audit, self.settings.cleanup)
        tasks = {
            asyncio.create_task(self.elector.run(), name="leader-keepalive"),
            asyncio.create_task(self.scheduler.run(), name="scheduler"),
            asyncio.create_task(self.controllers.run(), name="controllers"),
            asyncio.create_task(cleanup.run(), name="cleanup"),
            asyncio.create_task(self.rebalancer.run(), name="rebalancer"),
        }
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                self._report_end(task)
        finally:
            self._term_ready = False
            self.metrics.is_leader.set(0)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.scheduler.close()
            self.controllers.close()
            self.rebalancer.close()
            self.scheduler = self.controllers = self.rebalancer = None
            if self.elector.is_leader:
                await self.elector.resign()  # a loop failed: hand over rather than lead without it

    def _report_end(self, task: asyncio.Task[object]) -> None:
        if task.cancelled():
            return
        error = task.exception()
        if error is None:
            log.info("leadership ended", identity=self.identity, reason=task.result())
        elif isinstance(error, FencedError):
            log.warning("leadership lost (a write was fenced)", identity=self.identity)
        else:
            log.error(
                "a leader loop failed; resigning",
                loop=task.get_name(),
                error=f"{type(error).__name__}: {error}",
                exc_info=error,
            )
