"""The scheduler's model of the cluster, kept in step with the object cache one change at a time.

Every cached object is converted to the core model once, when it changes: a node to a ``Node``, a
replica to a ``Task`` (lazily, at the first cycle that needs it), a queue to a ``Queue``. A cycle then
assembles a ``Cluster`` from these converted pieces without reading or parsing anything again.

What goes into a cycle's cluster:

* every replica that holds a node (Scheduled, Running, Terminating with a node) on a node that
  exists, so its resources are counted;
* every Pending replica that is *due* (not waiting out a backoff) and whose queue exists; a Pending
  replica of an unknown queue is left out and reported as blocked.

An object whose conversion raises (a node, queue or template; a job's replicas) is left out, as if it
were not stored, and recorded in ``skipped`` (``skipped_objects.py``): one bad object never stops the
cycle of every other one. A skipped job's due Pending replicas are reported as blocked, with why.

Jobs are named ``<deployment>/<service>`` or after the Job and come in age order (their owner's
creation revision); how a service becomes core jobs, and its placement mode a profile or pins, is
``service_jobs.py``. A job key whose replicas did not change and has none Pending is not rebuilt: its
jobs are kept from the previous cycle, so a cycle costs in proportion to what changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from loadmaster.core.heartbeat import HEARTBEAT_FRESH_FOR
from loadmaster.core.model import (
    DEFAULT_QUEUE,
    Cluster,
    Node,
    Queue,
    SchedulerConfig,
    Task,
    TaskStatus,
)
from loadmaster.manifests import (
    DEPLOYMENT,
    JOB,
    NODE,
    QUEUE,
    REPLICA,
    WORKER_TEMPLATE,
    WorkerTemplate,
    node_from_manifest,
    queue_from_manifest,
    worker_template_from_manifest,
)
from loadmaster.manifests.model.job_spec import job_level, queue_of
from loadmaster.manifests.model.task_model import bound_at_s, job_name_of
from loadmaster.manifests.replicas import ReplicaPhase
from loadmaster.manifests.timestamps import parse_timestamp
from loadmaster.runtime.plane.object_cache import Cached, ObjectCache
from loadmaster.runtime.scheduling.gpu_shape_learning import GpuShapeLearning
from loadmaster.runtime.scheduling.model.backoff_ends import BackoffEnds
from loadmaster.runtime.scheduling.model.built_jobs import BlockedReplica, BuiltJob, BuiltJobs
from loadmaster.runtime.scheduling.model.capacity_reads import CapacityReads
from loadmaster.runtime.scheduling.model.model_entries import (
    NO_WAIVER,
    NodeEntry,
    ReplicaState,
    TriggerWaiver,
    lacks_holdings_record,
    replica_state,
)
from loadmaster.runtime.scheduling.model.service_jobs import jobs_for, pin_hosts
from loadmaster.runtime.scheduling.model.skipped_objects import (
    INVALID_SPEC_REASON,
    JOB_KIND,
    NODE_KIND,
    QUEUE_KIND,
    TEMPLATE_KIND,
    SkippedObjects,
)
from loadmaster.runtime.scheduling.room_events import RoomLog
from loadmaster.runtime.scheduling.stale_gangs import gang_size, stale_gangs, with_stale_for
from loadmaster.runtime.scheduling.timeslot_windows import (
    DEFAULT_TIMESLOT_LEAD,
    TIMESLOT_NOT_OPEN,
    before_window_message,
    opens_at,
)

_T = TypeVar("_T")


@dataclass(slots=True)
class ClusterBuild:
    cluster: Cluster
    replicas: dict[str, ReplicaState]  # every replica in the cluster, by name
    attempted: list[ReplicaState]  # the Pending ones among them
    blocked: list[BlockedReplica]  # due Pending replicas left out, and why
    nodes: dict[str, Node]
    templates: list[WorkerTemplate] = field(default_factory=list)
    unrecorded: list[ReplicaState] = field(default_factory=list)  # placed, lacking devices/slot records


class SchedulingModel:
    """Converted model objects, updated by ``on_change``; ``build(now)`` makes a cycle's Cluster."""

    def __init__(
        self,
        cache: ObjectCache,
        config: SchedulerConfig | None = None,
        skipped: SkippedObjects | None = None,
        heartbeat_window: timedelta = HEARTBEAT_FRESH_FOR,
        timeslot_lead: timedelta = DEFAULT_TIMESLOT_LEAD,
        capacity_reads: CapacityReads | None = None,
    ) -> None:
        self._cache = cache
        self._building = asyncio.Lock()
        self.capacity_reads = capacity_reads or CapacityReads()
        self.timeslot_lead = timeslot_lead
        self.config = config or SchedulerConfig()
        self.skipped = skipped or SkippedObjects()
        self.heartbeat_window = heartbeat_window
        self.gpu_shapes = GpuShapeLearning()  # the GPU shapes seen, decayed: an input of every cycle
        self.replicas: dict[str, ReplicaState] = {}
        self.jobs: dict[str, dict[str, ReplicaState]] = {}
        self.pending: set[str] = set()
        self._backoff_ends = BackoffEnds()  # of the Pending replicas
        # The admin trigger's waiver: every replica state written at or before its revision is due once.
        self.waiver = NO_WAIVER
        self.unrecorded: set[str] = set()  # placed without their devices or address slot on record
        self.gang_keys: set[str] = set()  # job keys of gang Jobs (min_available > 1): stale_gangs.py
        self._ordered_jobs: dict[str, list[str]] = {}  # a job's replica names, oldest first
        # Per job with nothing Pending: its core jobs and replicas as last built, until one of them changes.
        self._built = BuiltJobs()
        self.nodes: dict[str, NodeEntry] = {}
        # The nodes with their state as of the last cycle, by name in name order, until ``_node_view_until``
        # (the first heartbeat to go stale) or a node joins or leaves; ``_stale_nodes`` changed meanwhile.
        self._node_view: dict[str, Node] | None = None
        self._node_view_until = _EPOCH
        self._stale_nodes: set[str] = set()
        self._queues: tuple[Queue, ...] | None = None
        self._templates: list[WorkerTemplate] | None = None
        self.changed = True  # something a cycle should look at happened since the last cycle
        # Nodes that gained room since the scheduler last looked (room_events.py), and the replicas
        # holding resources on each node (so a room check reads only the nodes that changed).
        self.room = RoomLog()
        self._holding: dict[str, set[str]] = {}
        for kind in (NODE, REPLICA):
            for cached in cache.objects[kind].values():
                self.on_change(kind, cached.name, None, cached)
        self.room.take()  # what is there at the start is not room gained: a new leader keeps the backoffs
        cache.add_listener(self.on_change)
        cache.add_heartbeat_listener(self.on_heartbeat)

    def close(self) -> None:
        self._cache.remove_listener(self.on_change)
        self._cache.remove_heartbeat_listener(self.on_heartbeat)

    # -- following the cache ----------------------------------------------------------------------

    def on_change(self, kind: str, name: str, before: Cached | None, after: Cached | None) -> None:
        if kind == REPLICA:
            self._replica_changed(name, after)
        elif kind == NODE:
            self._node_changed(name, after)
        else:
            if kind == QUEUE:
                self._queues = None
            elif kind == WORKER_TEMPLATE:
                self._templates = None
            if kind == QUEUE:
                self._built.forget_all(self.jobs)  # queues decide which replicas are blocked
            elif kind == DEPLOYMENT:
                # its services' jobs take their fields from its spec
                self._built.forget_all(k for k in self.jobs if k.startswith(f"{name}/"))
            elif kind == JOB and name in self.jobs:
                self._built.forget(name)
            self.changed = True  # an owner's priority, a queue's quota, a template: worth a new look

    def _ordered(self, key: str) -> list[ReplicaState]:
        """The job's replicas, oldest first (the order of names is kept until one joins or leaves)."""
        names = self._ordered_jobs.get(key)
        members = self.jobs[key]
        if names is None:
            names = self._ordered_jobs[key] = [
                r.name for r in sorted(members.values(), key=lambda r: r.order)
            ]
        return [members[name] for name in names]

    def _replica_changed(self, name: str, after: Cached | None) -> None:
        old = self.replicas.pop(name, None)
        self.unrecorded.discard(name)
        new_key = job_name_of(after.obj.get("spec", {})) if after is not None else None
        converted = replica_state(after) if after is not None else None
        self._follow_holding(name, old, converted)
        pending_end = converted.next_attempt_at if converted is not None and converted.pending else None
        self._backoff_ends.set(name, pending_end)
        if old is not None:
            self._built.forget(old.job_key)
            if new_key != old.job_key or after is None:
                self._ordered_jobs.pop(old.job_key, None)
            self.jobs[old.job_key].pop(name, None)
            if not self.jobs[old.job_key]:
                del self.jobs[old.job_key]
                self.gang_keys.discard(old.job_key)
                self._built.drop(old.job_key)
            self.pending.discard(name)
        if converted is None:
            self.changed |= old is not None and old.holds  # freed resources
            return
        new = converted
        if old is None or old.job_key != new.job_key:
            self._ordered_jobs.pop(new.job_key, None)
        self._built.forget(new.job_key)
        self.replicas[name] = new
        if lacks_holdings_record(new):
            self.unrecorded.add(name)
            self.changed = True  # the next cycle records them
        self.jobs.setdefault(new.job_key, {})[name] = new
        if gang_size(new) > 1:
            self.gang_keys.add(new.job_key)
        if new.pending:
            self.pending.add(name)
        if old is not None and old.obj.get("spec") == new.obj.get("spec") and old.phase == new.phase:
            new.task = old.task if old.node_ref == new.node_ref else None
            return  # only the status the scheduler itself writes changed
        if old is not None and old.pending and not new.pending and not new.holds:
            return  # removed before it was placed: frees nothing
        if old is not None and old.pending and new.phase == ReplicaPhase.SCHEDULED.value:
            if old.task is not None and old.obj.get("spec") == new.obj.get("spec"):
                # The task a bind makes, without converting the replica again (what task_from_replica
                # gives for a Scheduled replica: Running on node_ref, no previous node).
                new.task = dataclasses.replace(
                    old.task,
                    status=TaskStatus.RUNNING,
                    node=new.node_ref,
                    previous_node=None,
                    bound_at_s=bound_at_s(new.obj.get("status", {})),
                    devices=tuple(int(d) for d in new.obj.get("status", {}).get("devices", ()) or ()),
                )
            return  # our own bind
        self.changed = True

    def on_heartbeat(self, kind: str, name: str, before: Cached | None, after: Cached | None) -> None:
        """Only the node's heartbeat time moved (its lease, object_cache.py)."""
        old = self.nodes.get(name)
        if old is None or after is None or before is None or old.source is not before.obj:
            self._node_changed(name, after)  # an entry built from another copy: build it again
            return
        self._heartbeat_moved(name, old, after)

    def _heartbeat_moved(self, name: str, old: NodeEntry, after: Cached) -> None:
        # The common case, every node every 30 s: same shape, same verdict, a later heartbeat.
        heartbeat = parse_timestamp(after.obj["status"]["last_heartbeat"])
        stale_at = old.stale_at()
        if not old.marked_not_ready and (stale_at is None or heartbeat >= stale_at):
            # silent too long (or never heard from), now heard: Ready again, so room again
            self.room.add(name)
            self.changed = True
        old.heartbeat = heartbeat
        old.source = after.obj
        self._stale_nodes.add(name)

    def _follow_holding(self, name: str, old: ReplicaState | None, new: ReplicaState | None) -> None:
        """Keep ``_holding`` in step, and log room on a node a replica stops holding resources on."""
        before = old.node_ref if old is not None and old.holds else None
        after = new.node_ref if new is not None and new.holds else None
        if before == after:
            return
        if before is not None:
            self._holding.get(before, set()).discard(name)
            self.room.add(before)
        if after is not None:
            self._holding.setdefault(after, set()).add(name)

    def _node_changed(self, name: str, after: Cached | None) -> None:
        old = self.nodes.get(name)
        if old is not None and after is not None and _only_heartbeat_moved(old, after):
            self._heartbeat_moved(name, old, after)
            return
        self.nodes.pop(name, None)
        if old is None or after is None:
            self._built.forget_all(self.jobs)  # a replica's node appeared or went: which replicas count
            self._node_view = None
        else:
            self._stale_nodes.add(name)
        if after is None:
            self.skipped.clear(NODE_KIND, name)
            self.changed = True
            return
        try:
            entry = _node_entry(after, self.heartbeat_window)
        except Exception as error:  # whatever it is, skip this object only (module doc)
            self.capacity_reads.record(success=False)
            self.skipped.record(NODE_KIND, name, error)
            if old is not None:  # it leaves the cluster as if deleted (the view is rebuilt without it)
                self._built.forget_all(self.jobs)
                self._node_view = None
            self.changed = True
            return
        self.capacity_reads.record(success=True)
        self.skipped.clear(NODE_KIND, name)
        self.nodes[name] = entry
        if old is None or old.shape != entry.shape or (old.marked_not_ready and not entry.marked_not_ready):
            self.room.add(name)  # joined, reshaped (uncordoned, resized, relabelled) or Ready again
        if (
            old is None
            or old.shape != entry.shape
            or old.marked_not_ready != entry.marked_not_ready
            or old.lost != entry.lost  # a gang held for the node-loss policy may be evicted now
        ):
            self.changed = True  # a new node, or a changed shape; a heartbeat alone changes nothing
        else:
            # A heartbeat keeps the very same Node while its state holds: the snapshot reuses its node
            # columns as long as every node is the same object (core/columns/node_columns.py).
            entry.current = old.current

    # -- questions the scheduler asks -------------------------------------------------------------

    def any_due(self, now: datetime) -> bool:
        """Whether a Pending replica is due at ``now``: it stops at the first (every cycle asks, and a
        backlog of 10,000 is scanned on the event loop)."""
        replicas = self.replicas
        waiver = self.waiver
        return any(replicas[name].is_due(now, waiver) for name in self.pending)

    def backing_off(self, now: datetime) -> list[ReplicaState]:
        """The Pending replicas waiting out a backoff at ``now``."""
        waiver = self.waiver
        return [r for name in self.pending if (r := self.replicas[name]).is_backing_off(now, waiver)]

    def waive_every_backoff(self, now: datetime) -> int:
        """Cut every Pending replica's backoff short (the admin trigger): every state written so far is
        due, until its next write (``ReplicaState.is_due``), without a pass over them; returns how many
        had a backoff ending after ``now``."""
        waiting = self.backoff_outlook(now)[0]
        self.waiver = TriggerWaiver(self._cache.revision, self.waiver.round + 1)
        self.changed |= waiting > 0
        return waiting

    def spend_waivers(self, attempted: Iterable[ReplicaState]) -> None:
        """These replicas' waived attempts wrote nothing (they failed as their records say: cycle_writes.py):
        their waivers are used up all the same, so they wait out their backoffs as recorded. A replica
        changed since (another state) is left alone: its new state carries no waiver of its own."""
        replicas, spent_round = self.replicas, self.waiver.round
        for state in attempted:
            if replicas.get(state.name) is state:
                state.backoff_waived = False
                state.spent_round = spent_round

    def waive_backoffs(self, names: Iterable[str]) -> None:
        """Cut these replicas' backoffs short: the next cycle attempts them (room_events.py)."""
        for name in names:
            replica = self.replicas.get(name)
            if replica is not None and replica.pending:
                replica.backoff_waived = True
                self.changed = True

    def room_on(self, names: Iterable[str], now: datetime) -> tuple[list[Node], list[Task]]:
        """The named nodes that exist, with their state at ``now``, and the replicas holding resources
        on them (as tasks): a room check's cluster."""
        nodes = [self.nodes[name].at(now) for name in sorted(names) if name in self.nodes]
        holding = [
            self.replicas[replica].as_task()
            for node in nodes
            for replica in sorted(self._holding.get(node.name, ()))
            if replica in self.replicas
        ]
        return nodes, holding

    def backoff_outlook(self, now: datetime) -> tuple[int, datetime | None]:
        """How many Pending replicas have a backoff ending after ``now``, and when the first of those
        ends (None: none has); waived backoffs count too: their record says when (``backoff_ends.py``)."""
        return self._backoff_ends.at(now)

    def stale_gangs(self, now: datetime) -> dict[str, datetime]:
        """Every stale gang Job and when it went stale (``stale_gangs.py``)."""
        return stale_gangs(self.jobs, self.gang_keys, self.nodes, now)

    def stale_deadlines(self, now: datetime) -> list[datetime]:
        """When each stale gang's grace period ends (or ended)."""
        if not self.gang_keys:
            return []
        grace = timedelta(seconds=self.config.staleness_grace_period_s)
        return [since + grace for since in self.stale_gangs(now).values()]

    def templates(self) -> list[WorkerTemplate]:
        if self._templates is None:
            cached = self._cache.objects[WORKER_TEMPLATE].values()
            converted = (self._converted(TEMPLATE_KIND, c, worker_template_from_manifest) for c in cached)
            self._templates = [template for template in converted if template is not None]
        return self._templates

    def queues(self) -> tuple[Queue, ...]:
        """The stored queues whose parent chain is whole; a queue under a missing parent is left out."""
        if self._queues is None:
            converted = {
                c.name: self._converted(QUEUE_KIND, c, queue_from_manifest)
                for c in self._cache.objects[QUEUE].values()
            }
            stored = {name: queue for name, queue in converted.items() if queue is not None}
            self._queues = tuple(stored[name] for name in sorted(stored) if _rooted(name, stored))
        return self._queues

    def _converted(self, kind: str, cached: Cached, convert: Callable[[dict[str, Any]], _T]) -> _T | None:
        """``convert(cached.obj)``, or None when it raises (the object is skipped, see the module doc)."""
        try:
            converted = convert(cached.obj)
        except Exception as error:  # whatever it is, skip this object only (module doc)
            self.skipped.record(kind, cached.name, error)
            return None
        self.skipped.clear(kind, cached.name)
        return converted

    # -- building a cycle's cluster ---------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def frozen(self) -> AsyncIterator[None]:
        """The model holds still (the cache applies no event, no other build runs) until this exits."""
        async with self._building, self._cache.holding():
            yield

    async def build_off_loop(self, now: datetime, include: frozenset[str] = frozenset()) -> ClusterBuild:
        """``build`` in a worker thread, the model frozen meanwhile: at 5,000 nodes and 10,000 Pending
        replicas a build takes a few hundred milliseconds, which the event loop spends on requests."""
        async with self.frozen():
            return await asyncio.to_thread(self.build, now, include)

    def build(self, now: datetime, include: frozenset[str] = frozenset()) -> ClusterBuild:
        """The cluster of a cycle at ``now``; Pending replicas named in ``include`` are in it even during
        a backoff (``why`` explains them against the current cluster)."""
        nodes = self._nodes_at(now)
        queues = self.queues()
        known_queues = {queue.name for queue in queues} | {DEFAULT_QUEUE}
        transient: list[tuple[str, BuiltJob]] = []
        for key in list(self._built.unbuilt):
            try:
                built = self._build_job(key, nodes, known_queues, now, include)
            except Exception as error:  # whatever it is, skip this object only (module doc)
                built = self._skipped_job(key, error, now, include)
            else:
                self.skipped.clear(JOB_KIND, key)
            if built.has_pending:
                transient.append((key, built))
            else:
                self._built.settle(key, built)
        transient.sort(key=lambda item: item[1].age)  # attempted and blocked in job order
        assembly = self._built.assemble(transient)
        all_queues = (*queues, *(Queue(name) for name in sorted(assembly.implicit_queues)))
        shapes = self.gpu_shapes.observe(assembly.attempted, assembly.replicas, now.timestamp())
        config = dataclasses.replace(self.config, gpu_shapes=shapes)
        jobs = with_stale_for(assembly.jobs, self.stale_gangs(now), now) if self.gang_keys else assembly.jobs
        cluster = Cluster(tuple(nodes.values()), jobs, all_queues, config)
        unrecorded = [assembly.replicas[n] for n in sorted(self.unrecorded) if n in assembly.replicas]
        return ClusterBuild(
            cluster,
            assembly.replicas,
            assembly.attempted,
            assembly.blocked,
            nodes,
            self.templates(),
            unrecorded,
        )

    def _nodes_at(self, now: datetime) -> dict[str, Node]:
        """Every node with its state as of ``now``, in name order. Kept between cycles: rebuilt when a node
        joins or leaves or a heartbeat goes stale, and only the nodes that changed are redone otherwise."""
        view = self._node_view
        if view is None or now >= self._node_view_until:
            view = self._node_view = {name: entry.at(now) for name, entry in sorted(self.nodes.items())}
            self._node_view_until = min(
                (stale_at for entry in self.nodes.values() if (stale_at := entry.stale_at()) is not None),
                default=_NEVER,
            )
        else:
            for name in self._stale_nodes:
                entry = self.nodes[name]
                view[name] = entry.at(now)
                stale_at = entry.stale_at()
                if stale_at is not None:
                    self._node_view_until = min(self._node_view_until, stale_at)
        self._stale_nodes.clear()
        return dict(view)  # the cycle keeps its own: the model changes while the cycle runs

    def _build_job(
        self, key: str, nodes: dict[str, Node], known_queues: set[str], now: datetime, include: frozenset[str]
    ) -> BuiltJob:
        members = self.jobs[key]
        level, age = self._job_level(key, members.values())
        queue = queue_of(level)
        if "profile" not in level:  # the queue's profile for the jobs that name none
            queue_spec = (cached.obj.get("spec") or {}) if (cached := self._cache.get(QUEUE, queue)) else {}
            if queue_spec.get("profile"):
                level = {**level, "profile": queue_spec["profile"]}
        built = BuiltJob(age=age, has_pending=False)
        holding: list[Task] = []
        waiting: list[Task] = []
        window_opens = self._window_opens_at(members.values())
        for replica in self._ordered(key):
            if replica.holds:
                if replica.node_ref in nodes:
                    holding.append(replica.as_task())
                    built.replicas[replica.name] = replica
            elif replica.pending:
                built.has_pending = True
                if not (replica.is_due(now, self.waiver) or replica.name in include):
                    continue
                if queue not in known_queues:
                    message = f"queue {queue} does not exist; apply a Queue named {queue}"
                    built.blocked.append(BlockedReplica(replica, "QueueNotFound", message))
                    continue
                if window_opens is not None and now < window_opens:
                    message = before_window_message(window_opens, self.timeslot_lead)
                    built.blocked.append(
                        BlockedReplica(replica, TIMESLOT_NOT_OPEN, message, "timeslot_not_open", window_opens)
                    )
                    continue
                waiting.append(replica.as_task())
                built.replicas[replica.name] = replica
                built.attempted.append(replica)
        if not holding and not waiting:
            return built
        if queue not in known_queues:
            built.implicit_queue = queue  # placed work of a deleted queue still counts somewhere
        if level.get("placement") == "hosts" and waiting:
            waiting = pin_hosts(level, holding, waiting, nodes)
        built.jobs = jobs_for(key, level, holding, waiting)
        return built

    def _skipped_job(self, key: str, error: Exception, now: datetime, include: frozenset[str]) -> BuiltJob:
        """A job that cannot be converted: none of its replicas is in the cycle; its due Pending ones
        are blocked with the reason (a Phase condition each), so ``describe`` and ``why`` say why."""
        message = self.skipped.record(JOB_KIND, key, error)
        built = BuiltJob(age=(0, 0, key), has_pending=any(r.pending for r in self.jobs[key].values()))
        for replica in self._ordered(key):
            if replica.pending and (replica.is_due(now, self.waiver) or replica.name in include):
                blocked = BlockedReplica(replica, INVALID_SPEC_REASON, message, failure="invalid_spec")
                built.blocked.append(blocked)
        return built

    def _window_opens_at(self, members: Iterable[ReplicaState]) -> datetime | None:
        """When the owner's time-slot lets its replicas be placed (None: it has no time-slot)."""
        spec = max(members, key=lambda r: r.order).obj.get("spec", {})
        owner_kind, owner = spec.get("owner_kind"), spec.get("owner")
        cached = self._cache.get(owner_kind, owner) if owner_kind in (DEPLOYMENT, JOB) else None
        return None if cached is None else opens_at(cached.obj.get("spec") or {}, self.timeslot_lead)

    def _job_level(
        self, key: str, members: Iterable[ReplicaState]
    ) -> tuple[dict[str, Any], tuple[int, int, str]]:
        """The spec a job's own fields come from (``manifests.model.job_spec``), and its age: its owner's
        creation, then its place among the owner's jobs; without a stored owner, its first replica's
        creation."""
        replicas = list(members)
        newest = max(replicas, key=lambda r: r.order)
        spec = newest.obj.get("spec", {})
        owner_kind, owner = spec.get("owner_kind"), spec.get("owner")
        cached = self._cache.get(owner_kind, owner) if owner_kind in (DEPLOYMENT, JOB) else None
        if cached is None:
            level, position = job_level(spec, None)
            return level, (min(r.create_revision for r in replicas), position, key)
        level, position = job_level(spec, cached.obj.get("spec", {}))
        return level, (cached.create_revision, position, key)


# Status fields placement never reads: a change of these alone is like a heartbeat (pressure samples
# arrive every node_status_interval from every node; they are the rebalancer's, not the scheduler's).
_NOT_PLACEMENT_STATUS = frozenset({"last_heartbeat", "pressure"})


def _only_heartbeat_moved(entry: NodeEntry, after: Cached) -> bool:
    """Whether ``after`` differs from the object ``entry`` was built from only by its heartbeat time
    (and its pressure sample)."""
    before, now_obj = entry.source, after.obj
    if (
        before is None
        or before.get("spec") != now_obj.get("spec")
        or before.get("metadata", {}).get("labels") != now_obj.get("metadata", {}).get("labels")
    ):
        return False
    old_status, new_status = before.get("status", {}), now_obj.get("status", {})
    if not new_status.get("last_heartbeat"):
        return False
    return all(
        old_status.get(k) == v for k, v in new_status.items() if k not in _NOT_PLACEMENT_STATUS
    ) and all(k in new_status for k in old_status)


def _node_entry(cached: Cached, window: timedelta) -> NodeEntry:
    status = cached.obj.get("status", {})
    heartbeat = status.get("last_heartbeat")
    node = node_from_manifest(cached.obj, _EPOCH)
    return NodeEntry(
        shape=dataclasses.replace(node, state="NotReady"),
        heartbeat=parse_timestamp(heartbeat) if heartbeat else None,
        marked_not_ready=status.get("state") == "NotReady",
        window=window,
        source=cached.obj,
        lost=bool((status.get("node_loss") or {}).get("lost_at")),
    )


def _rooted(name: str, queues: dict[str, Queue]) -> bool:
    seen: set[str] = set()
    current: str | None = name
    while current is not None:
        if current in seen or current not in queues:
            return False
        seen.add(current)
        current = queues[current].parent
    return True


# Nodes are converted once, at an arbitrary time: ``NodeEntry.at`` sets the state for each cycle.
_EPOCH = datetime.fromisoformat("1970-01-01T00:00:00+00:00")
_NEVER = datetime.max.replace(tzinfo=UTC)
