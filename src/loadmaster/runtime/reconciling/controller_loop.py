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
from loadmaster.controllers.deployment import GLOBAL, DeploymentObserved, reconcile_deployment
from loadmaster.controllers.drain import reconcile_drain
from loadmaster.controllers.job import reconcile_job
from loadmaster.controllers.node_health import reconcile_nodes
from loadmaster.controllers.replacement import reconcile_replacements
from loadmaster.controllers.replica_gc import reconcile_replicas
from loadmaster.controllers.views import LEAVING_PHASES, PLACED_PHASES, NodeView
from loadmaster.core.heartbeat import HEARTBEAT_FRESH_FOR
from loadmaster.manifests import DEPLOYMENT, JOB, NODE, REPLICA
from loadmaster.manifests.replicas import replacement_name
from loadmaster.runtime.plane.audit import AuditLog
from loadmaster.runtime.plane.clock import Clock
from loadmaster.runtime.plane.object_cache import Cached, ObjectCache
from loadmaster.runtime.plane.pass_loop import PassLoop, PassResult, PassTiming
from loadmaster.runtime.reconciling.change_writes import ChangeOutcome, write_changes
from loadmaster.runtime.reconciling.controller_views import ViewCache
from loadmaster.runtime.reconciling.drain_tracking import DrainTracking
from loadmaster.runtime.reconciling.node_deadlines import NodeDeadlines
from loadmaster.runtime.reconciling.owner_errors import OwnerErrors
from loadmaster.runtime.reconciling.replacement_tracking import ReplacementTracking
from loadmaster.store.interface import Fence, Store, UnavailableError

log = structlog.get_logger(__name__)

# A pass's log line is info only when it is worth an operator's reading (a conflict, a node marked
# NotReady, or this slow); a routine one, dozens a second under load, is debug.
SLOW_PASS_S = 0.1


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
    ) -> None:
        self._store = store
        self._cache = cache
        self._clock = clock
        self._fence = fence
        self._audit = audit
        self.heartbeat_window = heartbeat_window
        self._deadlines = NodeDeadlines(heartbeat_window)
        self.owner_errors = owner_errors or OwnerErrors()  # one owner's error stays with it
        self._views = ViewCache()
        self._by_owner: dict[tuple[str, str], set[str]] = {}
        self._owner_of: dict[str, tuple[str, str]] = {}
        self._dirty_owners: set[tuple[str, str]] = set()
        self._dirty_replicas: set[str] = set()
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
            next_due_s=self._next_deadline_s,
            on_store_error=self._store_failed,
        )
        for cached in cache.objects[REPLICA].values():
            self._index_replica(cached.name, None, cached)
            self._replacements.follow(cached.name, cached)
            self._drains.follow_replica(cached.name, None, cached)
        for cached in cache.objects[NODE].values():
            self._deadlines.follow(cached.name, cached)
            self._drains.follow_node(cached.name, cached)
        cache.add_listener(self._on_change)

    def close(self) -> None:
        self._cache.remove_listener(self._on_change)

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
            replacement_dirty = self._replacements.follow(name, after)
            replacement_dirty |= self._drains.follow_replica(name, before, after)
            if after is None:
                self._views.forget(kind, name)
            elif self._needs_collecting(after):
                self._dirty_replicas.add(name)
            elif not (owner_dirty or replacement_dirty):
                return  # a bind or a status report: nothing for the controllers
        elif kind in (DEPLOYMENT, JOB):
            self._dirty_owners.add((kind, name))
        elif kind == NODE:
            self._deadlines.follow(name, after)
            self._drains.follow_node(name, after)
            if before is None or after is None or _node_signal(before) != _node_signal(after):
                self._nodes_changed = True
        else:
            return
        self._loop.wake()

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
        changes = self._changes(full, now)
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

    def _next_deadline_s(self) -> float | None:
        """Seconds until the earliest timer: a Ready node's heartbeat window runs out, or a replacement's
        deadline comes (None: no timer ahead; a node deadline in the past has had its pass, and a write
        that did not land wakes the loop itself, so a deadline in the past never makes the loop spin)."""
        now = self._clock.now()
        ahead = [
            (moment - now).total_seconds()
            for moment in (
                self._deadlines.earliest(),
                self._replacements.earliest_deadline(),
                self._drains.earliest_deadline(),
            )
            if moment is not None
        ]
        due_s = min(ahead, default=0.0)
        return due_s if due_s > 0 else None

    def _node_check_due(self, full: bool, nodes_changed: bool, now: datetime) -> bool:
        """Node health is looked at on a full pass, when a node changed, and when a Ready node's window
        ran out; not on every pass: a pass per apply would walk every node each time."""
        earliest = self._deadlines.earliest()
        return full or nodes_changed or (earliest is not None and earliest <= now)

    def _changes(self, full: bool, now: datetime) -> list[Change]:
        cache, views = self._cache, self._views
        owners, self._dirty_owners = self._dirty_owners, set()
        dirty_replicas, self._dirty_replicas = self._dirty_replicas, set()
        nodes_changed, self._nodes_changed = self._nodes_changed, False
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
        # Every node's view, only when something here reads them (node health, deployments' placement).
        needs_nodes = check_nodes or any(kind == DEPLOYMENT for kind, _ in owners)
        nodes = [views.node(c) for c in cache.objects[NODE].values()] if needs_nodes else []
        window = self.heartbeat_window
        changes: list[Change] = list(reconcile_nodes(nodes, now, window)) if check_nodes else []
        for kind, owner in sorted(owners):
            reconcile = partial(self._reconcile_owner, kind, owner, nodes, now)
            changes.extend(self.owner_errors.guarded(kind, owner, reconcile, []))
        gc_names = cache.objects[REPLICA].keys() if full or nodes_changed else dirty_replicas
        replicas = [views.replica(c) for name in gc_names if (c := cache.objects[REPLICA].get(name))]
        changes.extend(reconcile_replicas(replicas, cache.objects[NODE].keys(), now))
        changes.extend(self._replacement_changes(full, now))
        changes.extend(self._drain_changes(full, now))
        unique: dict[str, Change] = {}
        for change in changes:
            unique.setdefault(_change_target(change), change)
        return list(unique.values())

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
        names = self._by_owner.get((kind, owner), set())
        replicas = [views.replica(c) for name in sorted(names) if (c := cache.objects[REPLICA].get(name))]
        cached = cache.get(kind, owner) if kind in (DEPLOYMENT, JOB) else None
        if kind == DEPLOYMENT:
            counters = {svc: nxt for (dep, svc), (nxt, _) in cache.counters.items() if dep == owner}
            desired = views.deployment(cached) if cached is not None else None
            observed = DeploymentObserved(replicas, counters, nodes, self.heartbeat_window)
            return reconcile_deployment(owner, desired, observed, now)
        if kind == JOB:
            return reconcile_job(owner, views.job(cached) if cached is not None else None, replicas, now)
        return []


def _is_global(views: ViewCache, cached: Cached) -> bool:
    return any(s.placement == GLOBAL for s in views.deployment(cached).services)


def _replica_signal(cached: Cached) -> tuple[object, ...]:
    """What the deployment and job controllers react to in a replica (not its placement)."""
    spec, phase = cached.obj.get("spec", {}), cached.obj.get("status", {}).get("phase")
    return spec.get("owner_kind"), spec.get("owner"), spec.get("spec_hash"), phase in LEAVING_PHASES


def _node_signal(cached: Cached) -> tuple[object, object]:
    """What the controllers react to in a node: its state and whether it is cordoned."""
    return cached.obj.get("status", {}).get("state"), cached.obj.get("spec", {}).get("unschedulable", False)
