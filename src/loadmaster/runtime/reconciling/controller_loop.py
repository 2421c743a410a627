"""The controller loop (leader only): runs the pure controllers on what changed and writes their changes.

Changes mark *dirty* what they touch: a deployment or job (its object or one of its replicas changed),
a replica (for garbage collection), the node set (global services and replicas on deleted nodes).
A pass reconciles only what is dirty, so a busy cluster costs work in proportion to what changes, not
to its size; the safety tick (default 30 s) reconciles everything, so nothing a missed event left
behind stays wrong for long. Node health depends on time alone: the loop keeps every Ready node's
deadline (last heartbeat + the heartbeat window, 90 s by default) and wakes at the earliest one, so a
silent node is marked NotReady the instant its window runs out (a timer, not a tick); a heartbeat moves
its node's deadline and costs nothing else. Like the scheduler, a pass waits until the cache holds the loop's
previous writes, and ``debounce_s`` spaces passes during a burst; the loop itself is
``runtime/plane/pass_loop.py``, shared with the scheduler.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial

import structlog

from loadmaster.controllers.changes import AbortReplacement, Change, MarkNodeNotReady, StartReplacement
from loadmaster.controllers.deployments.deployment import DeploymentObserved, reconcile_deployment
from loadmaster.controllers.deployments.deployment_rollout import GLOBAL
from loadmaster.controllers.deployments.rollout_plan import DEFAULT_STEP_TIMEOUT_S
from loadmaster.controllers.deployments.service_slots import DeploymentSlots
from loadmaster.controllers.job import reconcile_job
from loadmaster.controllers.nodes.address_pools import reconcile_address_pools
from loadmaster.controllers.nodes.drain import reconcile_drain
from loadmaster.controllers.nodes.node_health import NOT_READY, reconcile_nodes
from loadmaster.controllers.nodes.node_loss import NodeLossSettings
from loadmaster.controllers.replacement import reconcile_replacements
from loadmaster.controllers.replica_gc import reconcile_replicas
from loadmaster.controllers.restarts import DEFAULT_RESTART_BUDGET, is_awaiting_restart, reconcile_restarts
from loadmaster.controllers.views import (
    LEAVING_PHASES,
    PLACED_PHASES,
    RUNNING,
    TERMINATING,
    NodeView,
    ReplicaView,
    ServiceView,
)
from loadmaster.core.heartbeat import HEARTBEAT_FRESH_FOR
from loadmaster.core.resources import ADDRESSES
from loadmaster.manifests import DEPLOYMENT, JOB, NODE, REPLICA
from loadmaster.manifests.replicas import replacement_name
from loadmaster.manifests.timeslots import Timeslot, timeslot_of
from loadmaster.runtime.plane.audit import AuditLog
from loadmaster.runtime.plane.clock import Clock
from loadmaster.runtime.plane.object_cache import Cached, ObjectCache
from loadmaster.runtime.plane.pass_loop import PassLoop, PassResult, PassTiming
from loadmaster.runtime.reconciling.controller_views import ViewCache
from loadmaster.runtime.reconciling.drain_tracking import DrainTracking
from loadmaster.runtime.reconciling.host_probe import HostProbe, HttpHostProbe
from loadmaster.runtime.reconciling.node_deadlines import NodeDeadlines
from loadmaster.runtime.reconciling.node_loss_watch import NodeLossWatch, replicas_by_node
from loadmaster.runtime.reconciling.owner_errors import OwnerErrors
from loadmaster.runtime.reconciling.paced_walk import kept, slices
from loadmaster.runtime.reconciling.replacement_tracking import ReplacementTracking
from loadmaster.runtime.reconciling.restart_placement import RestartNodeCheck, restarts_where_they_may_run
from loadmaster.runtime.reconciling.writes.change_writes import ChangeOutcome, write_changes
from loadmaster.store.interface import Fence, Store, UnavailableError

log = structlog.get_logger(__name__)

# A pass's log line is info only when it is worth an operator's reading (a conflict, a node marked
# NotReady, or this slow); a routine one, dozens a second under load, is debug.
SLOW_PASS_S = 0.1
# Owners reconciled between two turns of the event loop in a pass (paced_walk.py): a deployment of 1,000
# replicas is a few milliseconds, a one-task Job a few microseconds.
OWNER_SLICE = 16


def _change_target(change: Change) -> str:
    """What a change is about, so two controllers never send two changes for one object in a pass."""
    if isinstance(change, StartReplacement | AbortReplacement):
        return replacement_name(change.replica)
    for attribute in ("name", "node"):
        value = getattr(change, attribute, None)
        if isinstance(value, str):
            return value
    return repr(change)


class ControllerLoop:
    def __init__(
        self,
        store: Store,
        cache: ObjectCache,
        clock: Clock,
        fence: Callable[[], Fence],
        timing: PassTiming | None = None,
        heartbeat_window: timedelta = HEARTBEAT_FRESH_FOR,
        audit: AuditLog | None = None,
        owner_errors: OwnerErrors | None = None,
        node_loss: NodeLossSettings | None = None,
        host_probe: HostProbe | None = None,
        restart_budget: int = DEFAULT_RESTART_BUDGET,
        rollout_step_timeout_s: float = DEFAULT_STEP_TIMEOUT_S,
        restart_node_check: RestartNodeCheck | None = None,
    ) -> None:
        self._store = store
        self._restart_node_check = restart_node_check
        self._cache = cache
        self._clock = clock
        self._fence = fence
        self._audit = audit
        self.heartbeat_window = heartbeat_window
        self.restart_budget = restart_budget
        self.rollout_step_timeout_s = rollout_step_timeout_s
        self._deadlines = NodeDeadlines(heartbeat_window)
        self.owner_errors = owner_errors or OwnerErrors()  # one owner's error stays with it
        self._views = ViewCache()
        self._by_owner: dict[tuple[str, str], set[str]] = {}
        self._owner_of: dict[str, tuple[str, str]] = {}
        self._dirty_owners: set[tuple[str, str]] = set()
        self._dirty_replicas: set[str] = set()
        self._failing: set[str] = set()  # replicas an agent reported failing: the restart policy's
        # Owners whose time-slot has not ended yet, and when it ends: the loop wakes then (a timer).
        self._slot_ends: dict[tuple[str, str], datetime] = {}
        self._replacements = ReplacementTracking()
        self._drains = DrainTracking()
        self._nodes_changed = True
        self._written_revision = 0
        # The controllers take what is dirty as a pass starts, so the pass after a store failure
        # looks at everything; the term's first pass does too (what changed before it is unknown).
        self._loop = PassLoop(
            self._pass,
            timing or PassTiming(),
            clock,
            first_pass_full=True,
            retry_full=True,
            next_due_s=self._next_due_s,
            on_store_error=self._store_failed,
        )
        self.node_loss = NodeLossWatch(
            host_probe or HttpHostProbe(), node_loss or NodeLossSettings(), clock, self._loop.wake
        )
        # Each deployment's replicas by service and index, kept one change at a time, so its pass costs
        # what changed (a rollout step of a 1,000-replica service looks at a few replicas, not 1,000).
        self._slots: dict[str, DeploymentSlots] = {}
        for cached in cache.objects[REPLICA].values():
            self._index_replica(cached.name, None, cached)
            self._replacements.follow(cached.name, cached)
            self._follow_slots(cached.name, None, cached)
            self._drains.follow_replica(cached.name, None, cached)
        for cached in cache.objects[NODE].values():
            self._deadlines.follow(cached.name, cached)
            self._drains.follow_node(cached.name, cached)
        for kind in (DEPLOYMENT, JOB):
            for cached in cache.objects[kind].values():
                self._follow_slot(kind, cached.name, cached)
        cache.add_listener(self._on_change)
        cache.add_heartbeat_listener(self._on_heartbeat)

    def close(self) -> None:
        self._cache.remove_listener(self._on_change)
        self._cache.remove_heartbeat_listener(self._on_heartbeat)
        self.node_loss.close()

    # -- following the cache --------------------------------------------------------------------

    def _index_replica(self, name: str, before: Cached | None, after: Cached | None) -> bool:
        """Keep the owner index, and mark the owner dirty when the replica changed in a way its
        controller reacts to (created, deleted, leaving, a different spec): True if it did. A bind or
        a status report does not count."""
        if before is not None and after is not None and _replica_signal(before) == _replica_signal(after):
            return False
        old = self._owner_of.pop(name, None)
        if old is not None:
            self._by_owner[old].discard(name)
            self._dirty_owners.add(old)
        if after is not None:
            spec = after.obj.get("spec", {})
            owner = (str(spec.get("owner_kind", "")), str(spec.get("owner", "")))
            self._owner_of[name] = owner
            self._by_owner.setdefault(owner, set()).add(name)
            self._dirty_owners.add(owner)
        return True

    def _follow_slots(self, name: str, before: Cached | None, after: Cached | None) -> bool:
        """Keep the deployments' slot indexes; True when a deployment replica's Running-ness changed (a
        rollout waiting for its new replicas to run reacts to that)."""
        owner = _deployment_of(after) if after is not None else ""
        old_owner = _deployment_of(before) if before is not None else ""
        old = self._slots.get(old_owner) if old_owner != owner else None
        if old is not None:
            old.drop(name)
        if after is None or not owner:
            return False
        self._slots.setdefault(owner, DeploymentSlots()).put(self._views.replica(after))
        return before is None or _is_running(before) != _is_running(after)

    def _needs_collecting(self, after: Cached) -> bool:
        """Whether garbage collection has anything to say about this replica now."""
        status = after.obj.get("status", {})
        phase, node = status.get("phase"), status.get("node_ref")
        if phase in LEAVING_PHASES:
            return True
        return phase in PLACED_PHASES and node not in self._cache.objects[NODE]

    def _on_change(self, kind: str, name: str, before: Cached | None, after: Cached | None) -> None:
        if kind == REPLICA:
            owner_dirty = self._index_replica(name, before, after)
            if self._follow_slots(name, before, after) and not owner_dirty and after is not None:
                self._dirty_owners.add((DEPLOYMENT, _deployment_of(after)))
                owner_dirty = True
            replacement_dirty = self._replacements.follow(name, after)
            replacement_dirty |= self._drains.follow_replica(name, before, after)
            if after is None:
                self._views.forget(kind, name)
            else:
                failing = _reported_failing(after) and is_awaiting_restart(self._views.replica(after))
                collecting = self._needs_collecting(after)
                if failing:
                    self._failing.add(name)
                if collecting:
                    self._dirty_replicas.add(name)
                if not (failing or collecting or owner_dirty or replacement_dirty):
                    return  # a bind or a status report: nothing for the controllers
        elif kind in (DEPLOYMENT, JOB):
            self._dirty_owners.add((kind, name))
            self._follow_slot(kind, name, after)
        elif kind == NODE:
            self._deadlines.follow(name, after)
            drain_dirty = self._drains.follow_node(name, after)
            if (
                before is not None
                and after is not None
                and _node_signal(before) == _node_signal(after)
                and not drain_dirty
            ):
                return  # its heartbeat, network or conditions: nothing for the controllers
            self._nodes_changed = True
        else:
            return
        self._loop.wake()

    def _on_heartbeat(self, kind: str, name: str, before: Cached | None, after: Cached | None) -> None:
        """A later heartbeat moves the node's staleness deadline and nothing else: no pass for it (the
        loop's next wake-up reads the earliest deadline afresh)."""
        self._deadlines.follow(name, after)

    # -- running ---------------------------------------------------------------------------------

    async def run(self) -> None:
        """Run passes until cancelled (the leadership loop cancels it when the term ends)."""
        await self._loop.run()

    async def _pass(self, full: bool) -> PassResult:
        outcome = await self.reconcile_once(full=full)
        return PassResult(outcome.written, len(outcome.conflicts))

    def _store_failed(self, error: UnavailableError) -> None:
        log.warning("controller pass could not reach the store; retrying", error=str(error))

    async def reconcile_once(self, full: bool = False) -> ChangeOutcome:
        """One pass over what is dirty (everything if ``full``); returns what was written."""
        started = time.perf_counter()  # for the log line: a slow pass is worth an operator's attention
        fence = self._fence()
        await self._cache.wait_for(self._written_revision)
        now = self._clock.now()
        async with self._cache.holding():  # every slice of the pass reads one state (paced_walk.py)
            changes = await self._changes(full, now)
        if not changes:
            return ChangeOutcome()
        outcome = await write_changes(self._store, self._cache, changes, fence, now, self._audit)
        self._written_revision = max(self._written_revision, outcome.revision)
        duration_s = time.perf_counter() - started
        nodes_not_ready = sum(isinstance(change, MarkNodeNotReady) for change in changes)
        notable = bool(outcome.conflicts) or nodes_not_ready > 0 or duration_s >= SLOW_PASS_S
        (log.info if notable else log.debug)(
            "controllers",
            changes=len(changes),
            written=outcome.written,
            conflicts=len(outcome.conflicts),
            nodes_not_ready=nodes_not_ready,
            duration_ms=round(duration_s * 1000, 1),
        )
        return outcome

    def _follow_slot(self, kind: str, name: str, cached: Cached | None) -> None:
        self._slot_ends.pop((kind, name), None)
        window = (
            None if cached is None else self.owner_errors.guarded(kind, name, partial(_window, cached), None)
        )
        if window is not None and window.end > self._clock.now():
            self._slot_ends[(kind, name)] = window.end

    def _next_due_s(self) -> float | None:
        """Seconds until the earliest timer ahead: a Ready node's heartbeat window runs out, a NotReady
        node's next node-loss stage, a replacement's or a drain's deadline, or a time-slot's end (None:
        no timer ahead; one in the past has had its pass, and a write that did not land wakes the loop
        itself, so a deadline in the past never makes the loop spin)."""
        now = self._clock.now()
        moments = (
            self._deadlines.earliest(),
            self.node_loss.next_due,
            self._replacements.earliest_deadline(),
            self._drains.earliest_deadline(),
            *self._slot_ends.values(),
        )
        ahead = [s for moment in moments if moment is not None and (s := (moment - now).total_seconds()) > 0]
        due_s = min(ahead, default=0.0)
        return due_s if due_s > 0 else None

    def _node_check_due(self, full: bool, nodes_changed: bool, now: datetime) -> bool:
        """Node health is looked at on a full pass, when a node changed, and when a Ready node's window
        ran out; not on every pass: a pass per apply would walk every node each time."""
        earliest = self._deadlines.earliest()
        return full or nodes_changed or (earliest is not None and earliest <= now)

    async def _changes(self, full: bool, now: datetime) -> list[Change]:
        cache, views = self._cache, self._views
        owners, self._dirty_owners = self._dirty_owners, set()
        dirty_replicas, self._dirty_replicas = self._dirty_replicas, set()
        failing, self._failing = self._failing, set()
        nodes_changed, self._nodes_changed = self._nodes_changed, False
        ended = [key for key, end in self._slot_ends.items() if end <= now]
        for key in ended:  # a slot that ended: its owner's replicas stop now (once; the tick re-checks)
            del self._slot_ends[key]
            owners.add(key)
        if full:
            owners |= {(DEPLOYMENT, name) for name in cache.objects[DEPLOYMENT]}
            owners |= {(JOB, name) for name in cache.objects[JOB]}
            owners |= set(self._by_owner)
        if nodes_changed:
            owners |= {
                (DEPLOYMENT, name)
                for name, cached in cache.objects[DEPLOYMENT].items()
                if self.owner_errors.guarded(DEPLOYMENT, name, partial(_is_global, views, cached), True)
            }
        check_nodes = self._node_check_due(full, nodes_changed, now)
        check_loss = check_nodes or self.node_loss.is_due(now)
        # Every node's view, only when something here reads them (node health and loss, deployments'
        # placement).
        needs_nodes = check_loss or any(kind == DEPLOYMENT for kind, _ in owners)
        nodes = await kept(cache.objects[NODE].values(), views.node) if needs_nodes else []
        window = self.heartbeat_window
        changes: list[Change] = list(reconcile_nodes(nodes, now, window)) if check_nodes else []
        if check_loss:
            changes.extend(self._node_loss_changes(nodes, now))
        async for piece in slices(sorted(owners), OWNER_SLICE):
            for kind, owner in piece:
                reconcile = partial(self._reconcile_owner, kind, owner, nodes, now)
                changes.extend(self.owner_errors.guarded(kind, owner, reconcile, []))
        stored = cache.objects[REPLICA]
        if full or nodes_changed:  # every replica, but a view only of those collection may act on
            collectable = await kept(stored.values(), lambda c: c if self._needs_collecting(c) else None)
        else:
            collectable = [c for name in dirty_replicas if (c := stored.get(name))]
        replicas = [views.replica(c) for c in collectable]
        # Which nodes are NotReady matters only to a stopping replica (replica_gc); most passes have none.
        stopping = any(replica.phase == TERMINATING for replica in replicas)
        not_ready = _not_ready(cache) if stopping else frozenset()
        changes.extend(reconcile_replicas(replicas, cache.objects[NODE].keys(), now, not_ready))
        restart_cached = stored.values() if full else [c for name in failing if (c := stored.get(name))]
        restart_views = await kept(restart_cached, views.replica)
        restarts = reconcile_restarts(restart_views, self.restart_budget)
        changes.extend(restarts_where_they_may_run(restarts, self._restart_node_check))
        if full or nodes_changed:
            changes.extend(await self._address_pool_changes(nodes))
        changes.extend(self._replacement_changes(full, now))
        changes.extend(self._drain_changes(full, now))
        unique: dict[str, Change] = {}
        for change in changes:
            unique.setdefault(_change_target(change), change)
        return list(unique.values())

    async def _address_pool_changes(self, nodes: list[NodeView]) -> list[Change]:
        """Replicas left without an address by a pool that shrank: a walk over the replicas that hold a
        slot, on full passes and node changes only (a pool changes only when its agent registers)."""
        cache, views = self._cache, self._views
        if not nodes:
            nodes = await kept(cache.objects[NODE].values(), views.node)
        holding = await kept(
            cache.objects[REPLICA].values(),
            lambda c: views.replica(c) if c.obj.get("status", {}).get("address_slot") is not None else None,
        )
        return reconcile_address_pools(holding, {node.name: node.address_pool for node in nodes})

    def _node_loss_changes(self, nodes: list[NodeView], now: datetime) -> list[Change]:
        """The node-loss stages of the NotReady nodes; the replicas and services are read only when a
        node is far enough into its stages for the policy to act (a walk over every replica)."""
        not_ready = [node for node in nodes if node.not_ready_at is not None]
        if not not_ready:
            self.node_loss.next_due = None
            return []
        wait = timedelta(seconds=self.node_loss.settings.wait_s)
        acting = {
            node.name
            for node in not_ready
            if node.lost_at is not None or (node.not_ready_at is not None and node.not_ready_at + wait <= now)
        }
        replicas_on: dict[str, list[ReplicaView]] = {}
        services: dict[tuple[str, str], ServiceView] = {}
        if acting:
            cache, views = self._cache, self._views
            placed = (
                views.replica(c)
                for c in cache.objects[REPLICA].values()
                if c.obj.get("status", {}).get("node_ref") in acting
            )
            replicas_on = replicas_by_node(placed, acting)
            for name, cached in cache.objects[DEPLOYMENT].items():
                view = self.owner_errors.guarded(DEPLOYMENT, name, partial(views.deployment, cached), None)
                if view is not None:
                    services.update(((name, service.name), service) for service in view.services)
        return self.node_loss.plan(not_ready, replicas_on, services, now)

    def _replacement_changes(self, full: bool, now: datetime) -> list[Change]:
        replicas, views = self._cache.objects[REPLICA], self._views
        looked_at = [views.replica(replicas[name]) for name in self._replacements.take(full, now)]
        replaced = {
            view.replaces: views.replica(cached)
            for view in looked_at
            if view.replaces is not None and (cached := replicas.get(view.replaces)) is not None
        }
        return reconcile_replacements(looked_at, replaced, now)

    def _drain_changes(self, full: bool, now: datetime) -> list[Change]:
        cache, views = self._cache, self._views
        replicas = cache.objects[REPLICA]
        changes: list[Change] = []
        for name in sorted(self._drains.take(full, now)):
            cached_node = cache.objects[NODE].get(name)
            if cached_node is None:
                continue
            on_node = [views.replica(c) for r in self._drains.on_node(name) if (c := replicas.get(r))]
            replacements = {
                replica.name: views.replica(c)
                for replica in on_node
                if (c := replicas.get(replacement_name(replica.name))) is not None
            }
            changes.extend(reconcile_drain(views.node(cached_node), on_node, replacements, now))
        return changes

    def _reconcile_owner(self, kind: str, owner: str, nodes: list[NodeView], now: datetime) -> list[Change]:
        cache, views = self._cache, self._views
        cached = cache.get(kind, owner) if kind in (DEPLOYMENT, JOB) else None
        if kind == DEPLOYMENT:
            counters = {svc: nxt for (dep, svc), (nxt, _) in cache.counters.items() if dep == owner}
            desired = views.deployment(cached) if cached is not None else None
            slots = self._slots.get(owner) or DeploymentSlots()
            observed = DeploymentObserved(
                (), counters, nodes, self.heartbeat_window, self.rollout_step_timeout_s, slots
            )
            return reconcile_deployment(owner, desired, observed, now)
        names = self._by_owner.get((kind, owner), set())
        replicas = [views.replica(c) for name in sorted(names) if (c := cache.objects[REPLICA].get(name))]
        if kind == JOB:
            return reconcile_job(owner, views.job(cached) if cached is not None else None, replicas, now)
        return []


def _not_ready(cache: ObjectCache) -> set[str]:
    return {
        name for name, c in cache.objects[NODE].items() if c.obj.get("status", {}).get("state") == NOT_READY
    }


def _reported_failing(cached: Cached) -> bool:
    """A cheap first look (no view built) at whether the agent reported the replica failing."""
    status = cached.obj.get("status", {})
    return bool(status.get("degraded") or status.get("exited"))


def _window(cached: Cached) -> Timeslot | None:
    return timeslot_of(cached.obj.get("spec") or {})


def _deployment_of(cached: Cached | None) -> str:
    """The deployment owning this replica ("" for a job's or an unowned one)."""
    spec = cached.obj.get("spec", {}) if cached is not None else {}
    return str(spec.get("owner", "")) if spec.get("owner_kind") == DEPLOYMENT else ""


def _is_running(cached: Cached) -> bool:
    return bool(cached.obj.get("status", {}).get("phase") == RUNNING)


def _is_global(views: ViewCache, cached: Cached) -> bool:
    return any(s.placement == GLOBAL for s in views.deployment(cached).services)


def _replica_signal(cached: Cached) -> tuple[object, ...]:
    """What the deployment and job controllers react to in a replica (not its placement)."""
    spec, phase = cached.obj.get("spec", {}), cached.obj.get("status", {}).get("phase")
    return spec.get("owner_kind"), spec.get("owner"), spec.get("spec_hash"), phase in LEAVING_PHASES


def _node_signal(cached: Cached) -> tuple[object, object, object, object]:
    """What the controllers react to in a node: its state, whether it is cordoned, its node-loss stage,
    its address pool (controllers/nodes/address_pools.py)."""
    status = cached.obj.get("status", {})
    return (
        status.get("state"),
        cached.obj.get("spec", {}).get("unschedulable", False),
        status.get("node_loss"),
        (status.get("allocatable") or {}).get(ADDRESSES),
    )
