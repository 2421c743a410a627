"""The scheduler service (leader only): watch, build the cluster, run the cycle, write the decisions.

It runs on the leader's pass loop (``runtime/plane/pass_loop.py``) and wakes when the model saw a
change a cycle should look at, when a backoff ends, on the safety tick (default 30 s: runs whatever
the events said, when a cycle has something to decide: a Pending replica, or a Job, whose gang may have
gone stale; a cluster of placed services only has nothing to decide) and when asked (``trigger``:
always runs). How soon the next cycle may follow one is
``runtime/plane/debounce.py``'s: ``debounce_s`` (default 50 ms) after a cycle that took part in a burst
(a rollout creating replicas in many transactions: one cycle per ``debounce_s`` instead of one per
event), a fifth of it after a cycle that placed a few (a trickle of applies), and no wait after an
idle one (a change arriving while the scheduler is idle is handled at once).

The decide step (``run_cycle``) runs where the ``Decider`` says (``deciders.py``: a worker process
for ``loadmaster server``, a thread in tests and the timeline harness), called from a worker thread,
and the planning of its writes runs in a worker thread (``asyncio.to_thread``, the only way work
leaves the loop), so the API keeps answering during a long cycle; they see an immutable ``Cluster``,
assembled in a worker thread too while the model is frozen (``SchedulingModel.build_off_loop``: the
cache applies no change meanwhile). Before each cycle the
service waits until the cache holds its own previous writes, so a replica it just bound is never
placed twice.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import structlog

from loadmaster.core.search_backoff import SearchBackoffLedger
from loadmaster.cycle import CyclePlan
from loadmaster.manifests import JOB
from loadmaster.runtime.plane.audit import AuditEntry, AuditLog
from loadmaster.runtime.plane.clock import Clock
from loadmaster.runtime.plane.debounce import SCHEDULER_TRICKLE_FRACTION
from loadmaster.runtime.plane.metrics import ControlPlaneMetrics
from loadmaster.runtime.plane.move_ledger import MoveLedger
from loadmaster.runtime.plane.object_cache import Cached, ObjectCache
from loadmaster.runtime.plane.pass_loop import PassLoop, PassResult, PassTiming
from loadmaster.runtime.plane.process.piecewise_drop import drop_in_pieces
from loadmaster.runtime.plane.storage.batched_writes import WriteGroup, write_groups
from loadmaster.runtime.scheduling.cycle_tally import BACKOFF_LOG_LINES, CycleTally
from loadmaster.runtime.scheduling.cycle_writes import CycleWrites, ReplicaUpdate, plan_writes
from loadmaster.runtime.scheduling.deciding.deciders import Decider, InProcessDecider
from loadmaster.runtime.scheduling.deciding.decision_step import DecideRequest
from loadmaster.runtime.scheduling.model.model_entries import ReplicaState
from loadmaster.runtime.scheduling.model.scheduling_model import ClusterBuild, SchedulingModel
from loadmaster.runtime.scheduling.room_events import fitting_waiting_tasks
from loadmaster.runtime.scheduling.scale_up.scale_up_webhook import ScaleUpWebhook
from loadmaster.runtime.scheduling.scale_up.scale_up_writes import record_scale_ups
from loadmaster.runtime.scheduling.telemetry.gpu_telemetry import GpuTelemetry
from loadmaster.runtime.scheduling.telemetry.queue_gauges import set_queue_gauges
from loadmaster.store.interface import Fence, Op, Store, UnavailableError

log = structlog.get_logger(__name__)

# Starts a voluntary move: (replica, destination node, now) -> the ops of its bound replacement.
MoveStarter = Callable[[str, str, datetime], Sequence[Op]]
# A replica waiting for a new node asks for one at most this often: provisioning takes minutes, and a
# request per cycle would ask for a node per cycle.
SCALE_UP_COOLDOWN = timedelta(minutes=5)
# A cycle's log line is info only when an operator should read it: a replica failed to place (wait), a
# running one was evicted or moved, a write conflicted, a node was asked for, or the cycle took this
# long. A cycle that only binds (dozens a second under load) logs at debug.
SLOW_CYCLE_S = 0.1
NOTABLE_DECISIONS = ("wait", "evict", "move")
# A cycle's updates are made into ops and written this many at a time (``_write``): ~4 transactions.
WRITE_CHUNK = 256


@dataclass(slots=True)
class CycleReport:
    """What one cycle did, for tests, stats and logs."""

    attempted: int = 0
    decisions: Counter[str] = field(default_factory=Counter)
    kept: int = 0  # waived retries that failed as recorded: not written (cycle_writes.py)
    conflicts: list[str] = field(default_factory=list)
    scale_ups: list[str] = field(default_factory=list)
    duration_s: float = 0.0


@dataclass(slots=True)
class SchedulerStats:
    cycles: int = 0
    last_cycle_s: float = 0.0
    last_cycle_at: str | None = None
    last_error: str | None = None
    pending: int = 0
    backoffs: int = 0
    # per evicting action, the jobs whose victim search rests after failed ones (core/search_backoff.py)
    resting_searches: dict[str, int] = field(default_factory=dict)


class SchedulerService:
    def __init__(
        self,
        store: Store,
        cache: ObjectCache,
        model: SchedulingModel,
        audit: AuditLog,
        metrics: ControlPlaneMetrics,
        clock: Clock,
        fence: Callable[[], Fence],
        timing: PassTiming | None = None,
        stats: SchedulerStats | None = None,
        webhook: ScaleUpWebhook | None = None,
        ledger: MoveLedger | None = None,
        backoff: SearchBackoffLedger | None = None,
        start_move: MoveStarter | None = None,
        decider: Decider | None = None,
    ) -> None:
        self._store = store
        self._cache = cache
        self.model = model
        self._audit = audit
        self._metrics = metrics
        self._clock = clock
        self._fence = fence
        self._ledger = ledger  # voluntary moves (consolidation) obey it and are recorded in it
        self._backoff = backoff  # failed searches rest (core/search_backoff.py); leader-local, per term
        # How a move starts: a make-before-break replacement bound to the destination (None: the old
        # way, the replica goes Terminating and its owner's replacement is placed by a later cycle).
        self._start_move = start_move
        self.stats = stats or SchedulerStats()  # owned by the control plane: it outlives a term
        self.webhook = webhook  # new scale-up requests are POSTed there (owned by the control plane)
        self._written_revision = 0
        self._loop = PassLoop(
            self._cycle,
            timing or PassTiming(),
            clock,
            trickle_fraction=SCHEDULER_TRICKLE_FRACTION,
            first_pass_full=False,
            retry_full=False,
            next_due_s=self._next_backoff_end_s,
            on_store_error=self._store_failed,
        )
        # Runs the decide step (owned by the control plane: a worker process outlives a term). It keeps
        # what the previous cycle's snapshot built, so a cycle recomputes only the nodes and jobs that
        # changed (one cycle runs at a time, so one cache is enough).
        self._decider = decider or InProcessDecider()
        self._scale_up_asked: dict[str, datetime] = {}  # replica -> when a scale-up was last asked for it
        self._retry_backoffs = False  # the admin trigger: every backoff is cut short
        self.gpu_telemetry = GpuTelemetry(metrics)
        cache.add_listener(self._on_change)

    def close(self) -> None:
        """Stop listening (the model outlives the service: it serves every term and the API)."""
        self._cache.remove_listener(self._on_change)

    def _on_change(self, kind: str, name: str, before: Cached | None, after: Cached | None) -> None:
        if self.model.changed:
            self._loop.wake()

    def trigger(self) -> None:
        """Run a full cycle as soon as possible, every replica in a backoff included (the admin endpoint)."""
        self._retry_backoffs = True
        self._loop.ask_full()

    async def run(self) -> None:
        """Cycle until cancelled (the leadership loop cancels it when the term ends)."""
        await self._loop.run()

    async def _cycle(self, tick: bool) -> PassResult:
        report = await self.reconcile_once(force=tick and self.tick_has_work())
        if report is None:
            return PassResult()
        return PassResult(sum(report.decisions.values()), len(report.conflicts))

    def tick_has_work(self) -> bool:
        """Whether a safety-tick cycle could decide anything (module doc); an admin trigger is a full
        pass asked for, and runs whatever this says."""
        return self._loop.full_was_asked or bool(self.model.pending) or bool(self._cache.objects[JOB])

    def _next_backoff_end_s(self) -> float | None:
        """Seconds until the first replica's backoff ends or a stale gang's grace runs out (None: neither
        is coming)."""
        now = self._clock.now()
        backoff_end = self.model.backoff_outlook(now)[1]
        ends = [end for end in self.model.stale_deadlines(now) if end > now]
        if backoff_end is not None:
            ends.append(backoff_end)
        return None if not ends else (min(ends) - now).total_seconds()

    def _store_failed(self, error: UnavailableError) -> None:
        """What the cycle wrote before the error is safe to plan again: each write compares the
        revision it read, so nothing is applied twice."""
        self.stats.last_error = f"{type(error).__name__}: {error}"
        log.warning("scheduling cycle could not reach the store; retrying", error=str(error))

    async def reconcile_once(self, force: bool = False) -> CycleReport | None:
        """One cycle if there is due Pending work (or ``force``); None when there was nothing to do."""
        fence = self._fence()
        await self._cache.wait_for(self._written_revision)
        now = self._clock.now()
        await self._cut_backoffs_short(now)
        self.model.changed = False
        due = self.model.any_due(now)
        # A stale gang's grace ran out: its eviction is a cycle's work even with nothing Pending.
        stale_due = any(end <= now for end in self.model.stale_deadlines(now))
        # A replica placed without its devices or address slot on record: a cycle records them.
        if not due and not force and not stale_due and not self.model.unrecorded:
            self._update_gauges()  # a cycle that runs updates them at its end (``_record``)
            return None
        garbage: list[list[Any]] = []
        report = await self._run_cycle(now, fence, garbage)
        # What the cycle leaves is freed in pieces off the loop, not in one cascade here: its updates
        # (10,000 encoded replicas) and the replica states it read, which its own writes superseded
        # (10,000 decoded objects: 15-50 ms in one go at the end of a cycle of waits).
        await asyncio.to_thread(drop_in_pieces, *garbage)
        return report

    async def _run_cycle(self, now: datetime, fence: Fence, garbage: list[list[Any]]) -> CycleReport | None:
        """Build, decide, write; the large lists it made go to ``garbage`` (each the last holder of what
        it holds, once this returns)."""
        started = time.perf_counter()
        unrecorded = set(self.model.unrecorded)
        build = await self.model.build_off_loop(now)
        cluster = build.cluster
        now_s = now.timestamp()
        if self._ledger is not None:
            config = dataclasses.replace(cluster.config, voluntary_moves=self._ledger.view(now_s))
            cluster = dataclasses.replace(cluster, config=config)
        if self._backoff is not None:
            cluster = self._backoff.cluster_at(cluster, now_s)
        request = DecideRequest(
            cluster, now_s, frozenset(r.name for r in build.unrecorded), self.gpu_telemetry.is_due(now_s)
        )
        try:
            decided = await asyncio.to_thread(self._decider.decide, request)
        except Exception as error:
            # A cycle that cannot run (inconsistent stored state) must not stop the service: the next
            # change or tick tries again; the error is logged, counted and shown in stats.
            self.stats.last_error = f"{type(error).__name__}: {error}"
            self._metrics.failures.labels(reason="cycle_error").inc()
            log.exception("scheduling cycle failed", error=self.stats.last_error)
            return None
        plan = decided.plan
        if self._backoff is not None:
            self._backoff.record(now_s, plan.searches)
            self.stats.resting_searches = self._backoff.resting_counts(now_s)
        if decided.gpu_report is not None:
            self.gpu_telemetry.publish(decided.gpu_report, now_s)
        set_queue_gauges(self._metrics, plan.queues)
        # Turning 10,000 decisions into store writes takes tens of milliseconds: off the loop as well.
        writes, by_name, tally = await asyncio.to_thread(_planned, plan, build, now)
        # Looked at once: a record that did not land comes back with the replica's next change.
        self.model.unrecorded.difference_update(unrecorded)
        self.model.spend_waivers(kept.replica for kept in writes.kept)
        report = CycleReport(attempted=len(build.attempted) + len(build.blocked), kept=len(writes.kept))
        written = await self._write(writes.updates, by_name, fence, report)
        if len(written) < len(writes.updates):  # conflicts, moves dropped: count what was written instead
            tally = CycleTally.of((by_name[name] for name in written), writes.kept)
        report.decisions = tally.decisions
        if self._ledger is not None:
            for node in tally.moves_to:
                self._ledger.record(node, self._clock.now().timestamp())
        self._count(tally)
        # Without a worker template no node can be asked for: the 10,000 unplaceable are not looked at.
        wanting = self._not_recently_requested(writes.unplaceable, now) if build.templates else []
        if wanting:
            requests, revision = await record_scale_ups(
                self._store, self._audit, wanting, build, now, fence, self._metrics
            )
            report.scale_ups = [request["id"] for request in requests]
            if self.webhook is not None:
                self.webhook.send(requests)
            self._written_revision = max(self._written_revision, revision)
            self._scale_up_asked.update({replica.name: now for replica in wanting})
        report.duration_s = time.perf_counter() - started
        # The pass loop asks ``_next_backoff_end_s`` as soon as this returns: the backoffs just written
        # must be in the model by then, or a retry would wait for the safety tick instead of its
        # backoff's end (a waiting replica's own write wakes nobody: SchedulingModel._replica_changed).
        await self._cache.wait_for(self._written_revision)
        self._record(report)
        garbage.extend((writes.updates, writes.kept, writes.unplaceable, build.attempted))
        return report

    async def _cut_backoffs_short(self, now: datetime) -> None:
        """Waive the backoff of every replica that could fit a node that gained room since the last
        cycle, or of every one after the admin trigger (room_events.py)."""
        room = self.model.room.take()
        if self._retry_backoffs:
            self._retry_backoffs = False
            if self._backoff is not None:
                self._backoff.clear()  # the failed searches' rests too: every job is searched again
            waived = self.model.waive_every_backoff(now)  # one pass over the Pending replicas
            if waived:
                log.info("backoff cut short", replicas=waived, nodes=sorted(room))
            return
        if not room:
            return
        waiting = self.model.backing_off(now)
        if not waiting:
            return
        nodes, holding = self.model.room_on(room, now)
        tasks = [replica.as_task() for replica in waiting]
        config = self.model.config
        fitting = await asyncio.to_thread(fitting_waiting_tasks, nodes, holding, tasks, config)
        if fitting:
            self.model.waive_backoffs(fitting)
            log.info("backoff cut short", replicas=len(fitting), nodes=sorted(room))

    async def _write(
        self,
        updates: list[ReplicaUpdate],
        by_name: dict[str, ReplicaUpdate],
        fence: Fence,
        report: CycleReport,
    ) -> list[str]:
        """Write the updates WRITE_CHUNK at a time: their ops (an audit entry each, a move's replacement)
        are made on the loop, and 10,000 of them in one go held it ~50-100 ms (bench/busy_cycle.py).
        Returns the names of the replicas written (conflicts are in ``report``)."""
        now = self._clock.now()
        written_names: list[str] = []
        for start in range(0, len(updates), WRITE_CHUNK):
            groups = self._groups(updates[start : start + WRITE_CHUNK], now)
            outcome = await write_groups(
                self._store,
                groups,
                fence,
                extras=lambda batch: self._batch_audit(batch, by_name),
                extras_room=2,
            )
            self._written_revision = max(self._written_revision, outcome.revision)
            report.conflicts.extend(outcome.conflicts)
            written_names.extend(outcome.written)
        return written_names

    def _groups(self, updates: Sequence[ReplicaUpdate], now: datetime) -> list[WriteGroup[str]]:
        """Each update's ops, with its audit entry, as one group (a move: its replacement's ops)."""
        groups = []
        for u in updates:
            ops: tuple[Op, ...] = (u.put,)
            if u.kind == "move" and self._start_move is not None and u.node is not None:
                ops = tuple(self._start_move(u.name, u.node, now))
                if not ops:
                    continue  # the replica changed or is being replaced already: the next cycle decides
            groups.append(
                WriteGroup(u.name, ops if u.audit is None else (*ops, self._audit.entry_put(u.audit)))
            )
        return groups

    def _not_recently_requested(self, unplaceable: list[ReplicaState], now: datetime) -> list[ReplicaState]:
        """Replicas for which no scale-up was asked within SCALE_UP_COOLDOWN (leader-local memory, like
        JACO's cooldowns: a new leader may ask once more, which a worker controller must tolerate)."""
        self._scale_up_asked = {
            name: at
            for name, at in self._scale_up_asked.items()
            if name in self.model.pending and now - at < SCALE_UP_COOLDOWN
        }
        return [replica for replica in unplaceable if replica.name not in self._scale_up_asked]

    def _batch_audit(self, batch: Sequence[WriteGroup[str]], by_name: dict[str, ReplicaUpdate]) -> list[Op]:
        """One ``schedule`` entry for the binds of a transaction, and the audit counter."""
        bindings = {g.tag: by_name[g.tag].node for g in batch if by_name[g.tag].kind == "bind"}
        entries = []
        if bindings:
            entries.append(
                AuditEntry(
                    "schedule",
                    "scheduler",
                    "replicas",
                    f"scheduled {len(bindings)} replica(s)",
                    {"bindings": bindings},
                )
            )
        if entries or any(by_name[g.tag].audit is not None for g in batch):
            return self._audit.ops(entries) if entries else [self._audit.counter_put()]
        return []

    def _count(self, tally: CycleTally) -> None:
        """The metrics of the written updates, added up per label off the loop (cycle_tally.py): a
        cycle of 10,000 waits makes a few increments on the event loop, not 10,000 (nor 10,000 log
        lines: BACKOFF_LOG_LINES). A kept retry left its replica Pending too: a failure, though
        nothing was written."""
        metrics = self._metrics
        now = self._clock.now()
        for kind, count in tally.decisions.items():
            metrics.decisions.labels(action=kind).inc(count)
        for node, count in tally.binds_per_node.items():
            metrics.successes.labels(node=node).inc(count)
        for created_at in tally.bound_created_at:
            metrics.e2e_duration.observe(max(0.0, (now - created_at).total_seconds()))
        for reason, count in tally.failures.items():
            metrics.failures.labels(reason=reason).inc(count)
        if tally.max_retries:
            metrics.max_retries.inc(tally.max_retries)
        if tally.retries:
            metrics.retries.inc(tally.retries)
        # Once per replica and backoff, not at every later attempt.
        for update in tally.entering[:BACKOFF_LOG_LINES]:
            log.error("replica backs off placement", replica=update.name, reason=update.message)
        if tally.entering_count > BACKOFF_LOG_LINES:
            first = tally.entering[BACKOFF_LOG_LINES]
            log.error(
                "more replicas back off placement",
                replicas=tally.entering_count - BACKOFF_LOG_LINES,
                first=first.name,
                reason=first.message,
            )

    def _record(self, report: CycleReport) -> None:
        self.stats.cycles += 1
        self.stats.last_cycle_s = report.duration_s
        self.stats.last_cycle_at = self._clock.now().isoformat()
        self._metrics.cycles.inc()
        self._metrics.decision_duration.observe(report.duration_s)
        self._update_gauges()
        if report.decisions or report.conflicts or report.kept:
            notable = (
                bool(report.conflicts)
                or bool(report.scale_ups)
                or any(report.decisions[kind] for kind in NOTABLE_DECISIONS)
                or report.duration_s >= SLOW_CYCLE_S
            )
            (log.info if notable else log.debug)(
                "cycle",
                attempted=report.attempted,
                decisions=dict(report.decisions),
                kept_retries=report.kept,
                conflicts=len(report.conflicts),
                scale_ups=len(report.scale_ups),
                duration_ms=round(report.duration_s * 1000, 1),
            )

    def _update_gauges(self) -> None:
        pending = len(self.model.pending)
        backoffs = self.model.backoff_outlook(self._clock.now())[0]
        self.stats.pending, self.stats.backoffs = pending, backoffs
        self._metrics.pending.set(pending)
        self._metrics.backoffs.set(backoffs)


def _planned(
    plan: CyclePlan, build: ClusterBuild, now: datetime
) -> tuple[CycleWrites, dict[str, ReplicaUpdate], CycleTally]:
    """The cycle's writes, by replica name, and their tally: all made in a worker thread."""
    writes = plan_writes(plan, build, now)
    by_name = {update.name: update for update in writes.updates}
    return writes, by_name, CycleTally.of(writes.updates, writes.kept)
