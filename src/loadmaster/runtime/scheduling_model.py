"""The scheduler's model of the cluster, kept in step with the object cache one change at a time.

Every cached object is converted to the core model once, when it changes: a node to a ``Node``, a
replica to a ``Task`` (lazily, at the first cycle that needs it), a queue to a ``Queue``. A cycle then
assembles a ``Cluster`` from these converted pieces without reading or parsing anything again.

What goes into a cycle's cluster:

* every replica that holds a node (Scheduled, Running, Terminating with a node) on a node that
  exists, so its resources are counted;
* every Pending replica that is *due* (not waiting out a backoff) and whose queue exists; a Pending
  replica of an unknown queue is left out and reported as blocked.

Each deployment service is one job (``<deployment>/<service>``) and each Job one job; jobs come in
age order (their owner's creation revision). Per-service placement modes map onto the core:
``spread`` -> the ``rendezvous`` profile (a node joining moves nothing), ``pack`` -> ``default`` (the
config's binpack strategy), ``hosts`` -> tasks pinned to the hosts list as one gang of all replicas,
``global`` -> each replica pinned to its own host.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from loadmaster.core.model import (
    DEFAULT_JOB_PRIORITY,
    DEFAULT_QUEUE,
    PREEMPTIBLE_BELOW_PRIORITY,
    Cluster,
    Job,
    Node,
    NodeState,
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
    is_heartbeat_fresh,
    node_from_manifest,
    queue_from_manifest,
    task_from_replica,
    worker_template_from_manifest,
)
from loadmaster.manifests.replicas import ReplicaPhase
from loadmaster.manifests.task_model import is_schedulable, job_name_of
from loadmaster.manifests.timestamps import parse_timestamp
from loadmaster.runtime.object_cache import Cached, ObjectCache
from loadmaster.runtime.phase_condition import phase_condition_of

PLACEMENT_PROFILES: dict[str, str | None] = {
    "spread": "rendezvous",
    "pack": "default",
    "hosts": None,
    "global": None,
}
_PENDING = ReplicaPhase.PENDING.value


@dataclass(slots=True)
class ReplicaState:
    name: str
    revision: int
    create_revision: int
    obj: dict[str, Any]
    job_key: str
    order: tuple[int, str]  # oldest first: counter index, then name
    phase: str
    node_ref: str | None
    holds: bool  # holds a node's resources (placed, or stopping on its node)
    attempts: int
    next_attempt_at: datetime | None
    task: Task | None = None

    @property
    def pending(self) -> bool:
        return self.phase == _PENDING

    def is_due(self, now: datetime) -> bool:
        return self.next_attempt_at is None or self.next_attempt_at <= now

    def as_task(self) -> Task:
        if self.task is None:
            self.task = task_from_replica(self.obj)
        return self.task


def pin_hosts(
    spec: dict[str, Any], holding: list[Task], waiting: list[Task], nodes: dict[str, Node]
) -> list[Task]:
    """``placement: hosts`` runs at most one replica per listed host (manifests: "at most one replica
    each"). Hosts already holding a replica of the service are taken; the waiting replicas, oldest
    first, are each pinned to one free host: Ready, uncordoned hosts first, then by name. A replica
    left without a host cannot be placed, and since the service is one gang, neither can the others.
    """
    taken = {task.node for task in holding}
    listed = [host for host in spec.get("hosts", []) if host not in taken]

    def usable(host: str) -> bool:
        return host in nodes and nodes[host].state == "Ready" and not nodes[host].unschedulable

    free = sorted(listed, key=lambda host: (not usable(host), host))
    return [
        dataclasses.replace(task, hosts=(free[i],) if i < len(free) else ()) for i, task in enumerate(waiting)
    ]


def replica_state(cached: Cached) -> ReplicaState:
    obj = cached.obj
    spec, status = obj.get("spec", {}), obj.get("status", {})
    phase = str(status.get("phase", _PENDING))
    condition = phase_condition_of(status)
    details = condition.get("details", {}) if condition else {}
    next_attempt = details.get("next_attempt_at")
    index = spec.get("index")
    return ReplicaState(
        name=cached.name,
        revision=cached.mod_revision,
        create_revision=cached.create_revision,
        obj=obj,
        job_key=job_name_of(spec),
        order=(index if isinstance(index, int) else -1, cached.name),
        phase=phase,
        node_ref=status.get("node_ref"),
        holds=phase != _PENDING and is_schedulable(obj),
        attempts=int(details.get("attempts", 0)) if phase == _PENDING else 0,
        next_attempt_at=parse_timestamp(next_attempt) if next_attempt else None,
    )


@dataclass(slots=True)
class NodeEntry:
    shape: Node  # as stored, state always NotReady: equal shapes mean nothing a cycle sees changed
    heartbeat: datetime | None
    marked_not_ready: bool
    current: Node | None = None  # the shape with the state of the last ``at``

    def at(self, now: datetime) -> Node:
        """The node with its state as of ``now`` (a heartbeat ages out without any event)."""
        fresh = not self.marked_not_ready and is_heartbeat_fresh(self.heartbeat, now)
        state: NodeState = "Ready" if fresh else "NotReady"
        if self.current is None or self.current.state != state:
            self.current = dataclasses.replace(self.shape, state=state)
        return self.current


@dataclass(slots=True)
class BlockedReplica:
    replica: ReplicaState
    reason: str
    message: str


@dataclass(slots=True)
class ClusterBuild:
    cluster: Cluster
    replicas: dict[str, ReplicaState]  # every replica in the cluster, by name
    attempted: list[ReplicaState]  # the Pending ones among them
    blocked: list[BlockedReplica]  # due Pending replicas left out, and why
    nodes: dict[str, Node]
    templates: list[WorkerTemplate] = field(default_factory=list)


@dataclass(slots=True)
class BuiltJob:
    """One job key's share of a cycle's cluster."""

    age: tuple[int, int, str]
    has_pending: bool  # Pending replicas make it time-dependent (backoffs end): never reused
    jobs: list[Job] = field(default_factory=list)
    replicas: dict[str, ReplicaState] = field(default_factory=dict)
    attempted: list[ReplicaState] = field(default_factory=list)
    blocked: list[BlockedReplica] = field(default_factory=list)
    implicit_queue: str | None = None


class SchedulingModel:
    """Converted model objects, updated by ``on_change``; ``build(now)`` makes a cycle's Cluster."""

    def __init__(self, cache: ObjectCache, config: SchedulerConfig | None = None) -> None:
        self._cache = cache
        self.config = config or SchedulerConfig()
        self.replicas: dict[str, ReplicaState] = {}
        self.jobs: dict[str, dict[str, ReplicaState]] = {}
        self.pending: set[str] = set()
        self._ordered_jobs: dict[str, list[str]] = {}  # a job's replica names, oldest first
        # Per job with nothing Pending: its core jobs and replicas as last built, until one of them changes.
        self._built: dict[str, BuiltJob] = {}
        self.nodes: dict[str, NodeEntry] = {}
        self._queues: tuple[Queue, ...] | None = None
        self._templates: list[WorkerTemplate] | None = None
        self.changed = True  # something a cycle should look at happened since the last cycle
        for kind in (NODE, REPLICA):
            for cached in cache.objects[kind].values():
                self.on_change(kind, cached.name, None, cached)
        cache.add_listener(self.on_change)

    def close(self) -> None:
        self._cache.remove_listener(self.on_change)

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
                self._built.clear()  # queues decide which replicas are blocked: build everything again
            elif kind == DEPLOYMENT:
                for key in [k for k in self._built if k.startswith(f"{name}/")]:
                    del self._built[key]  # its services' jobs take their fields from its spec
            elif kind == JOB:
                self._built.pop(name, None)
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
        new_key = job_name_of(after.obj.get("spec", {})) if after is not None else None
        if old is not None:
            self._built.pop(old.job_key, None)
            if new_key != old.job_key or after is None:
                self._ordered_jobs.pop(old.job_key, None)
            self.jobs[old.job_key].pop(name, None)
            if not self.jobs[old.job_key]:
                del self.jobs[old.job_key]
            self.pending.discard(name)
        if after is None:
            self.changed |= old is not None and old.holds  # freed resources
            return
        new = replica_state(after)
        if old is None or old.job_key != new.job_key:
            self._ordered_jobs.pop(new.job_key, None)
        self._built.pop(new.job_key, None)
        self.replicas[name] = new
        self.jobs.setdefault(new.job_key, {})[name] = new
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
                    old.task, status=TaskStatus.RUNNING, node=new.node_ref, previous_node=None
                )
            return  # our own bind
        self.changed = True

    def _node_changed(self, name: str, after: Cached | None) -> None:
        old = self.nodes.pop(name, None)
        if old is None or after is None:
            self._built.clear()  # a replica's node appeared or went: which replicas count changes
        if after is None:
            self.changed = True
            return
        status = after.obj.get("status", {})
        heartbeat = status.get("last_heartbeat")
        node = node_from_manifest(after.obj, _EPOCH)
        entry = NodeEntry(
            shape=dataclasses.replace(node, state="NotReady"),
            heartbeat=parse_timestamp(heartbeat) if heartbeat else None,
            marked_not_ready=status.get("state") == "NotReady",
        )
        self.nodes[name] = entry
        if old is None or old.shape != entry.shape or old.marked_not_ready != entry.marked_not_ready:
            self.changed = True  # a new node, or a changed shape; a heartbeat alone changes nothing

    # -- questions the scheduler asks -------------------------------------------------------------

    def due_pending(self, now: datetime) -> list[ReplicaState]:
        return [r for name in self.pending if (r := self.replicas[name]).is_due(now)]

    def next_backoff_end(self, now: datetime) -> datetime | None:
        ends = [r.next_attempt_at for name in self.pending if (r := self.replicas[name]).next_attempt_at]
        later = [end for end in ends if end > now]
        return min(later) if later else None

    def templates(self) -> list[WorkerTemplate]:
        if self._templates is None:
            cached = self._cache.objects[WORKER_TEMPLATE]
            self._templates = [worker_template_from_manifest(c.obj) for c in cached.values()]
        return self._templates

    def queues(self) -> tuple[Queue, ...]:
        """The stored queues whose parent chain is whole; a queue under a missing parent is left out."""
        if self._queues is None:
            stored = {c.name: queue_from_manifest(c.obj) for c in self._cache.objects[QUEUE].values()}
            self._queues = tuple(stored[name] for name in sorted(stored) if _rooted(name, stored))
        return self._queues

    # -- building a cycle's cluster ---------------------------------------------------------------

    def build(self, now: datetime, include: frozenset[str] = frozenset()) -> ClusterBuild:
        """The cluster of a cycle at ``now``; Pending replicas named in ``include`` are in it even during
        a backoff (``why`` explains them against the current cluster)."""
        nodes = {name: entry.at(now) for name, entry in sorted(self.nodes.items())}
        queues = self.queues()
        known_queues = {queue.name for queue in queues} | {DEFAULT_QUEUE}
        implicit: set[str] = set()
        jobs: list[tuple[tuple[int, int, str], list[Job]]] = []
        in_cluster: dict[str, ReplicaState] = {}
        attempted: list[ReplicaState] = []
        blocked: list[BlockedReplica] = []
        for key in self.jobs:
            built = self._built.get(key)
            if built is None:
                built = self._build_job(key, nodes, known_queues, now, include)
                if not built.has_pending:
                    self._built[key] = built
            in_cluster.update(built.replicas)
            attempted.extend(built.attempted)
            blocked.extend(built.blocked)
            if built.implicit_queue is not None:
                implicit.add(built.implicit_queue)
            if built.jobs:
                jobs.append((built.age, built.jobs))
        jobs.sort(key=lambda item: item[0])
        all_queues = (*queues, *(Queue(name) for name in sorted(implicit)))
        cluster_jobs = tuple(job for _, group in jobs for job in group)
        cluster = Cluster(tuple(nodes.values()), cluster_jobs, all_queues, self.config)
        return ClusterBuild(cluster, in_cluster, attempted, blocked, nodes, self.templates())

    def _build_job(
        self, key: str, nodes: dict[str, Node], known_queues: set[str], now: datetime, include: frozenset[str]
    ) -> BuiltJob:
        members = self.jobs[key]
        level, age = self._job_level(key, members.values())
        queue = str(level.get("queue", DEFAULT_QUEUE))
        built = BuiltJob(age=age, has_pending=False)
        holding: list[Task] = []
        waiting: list[Task] = []
        for replica in self._ordered(key):
            if replica.holds:
                if replica.node_ref in nodes:
                    holding.append(replica.as_task())
                    built.replicas[replica.name] = replica
            elif replica.pending:
                built.has_pending = True
                if not (replica.is_due(now) or replica.name in include):
                    continue
                if queue not in known_queues:
                    message = f"queue {queue} does not exist; apply a Queue named {queue}"
                    built.blocked.append(BlockedReplica(replica, "QueueNotFound", message))
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

    def _job_level(
        self, key: str, members: Iterable[ReplicaState]
    ) -> tuple[dict[str, Any], tuple[int, int, str]]:
        """The spec a job's own fields come from (its owner's, else its newest replica's), and its age."""
        replicas = list(members)
        newest = max(replicas, key=lambda r: r.order)
        spec = newest.obj.get("spec", {})
        owner_kind, owner = spec.get("owner_kind"), spec.get("owner")
        cached = self._cache.get(owner_kind, owner) if owner_kind in (DEPLOYMENT, JOB) else None
        if cached is None:
            first = min(r.create_revision for r in replicas)
            return dict(spec), (first, 0, key)
        if owner_kind == DEPLOYMENT:
            services = cached.obj.get("spec", {}).get("services", [])
            for position, service in enumerate(services):
                if service.get("name") == spec.get("service"):
                    return {**service, "owner_kind": DEPLOYMENT}, (cached.create_revision, position, key)
            return dict(spec), (cached.create_revision, len(services), key)
        return {**cached.obj.get("spec", {}), "owner_kind": JOB}, (cached.create_revision, 0, key)


def jobs_for(key: str, level: dict[str, Any], holding: list[Task], waiting: list[Task]) -> list[Job]:
    """The core jobs of a service or Job, from the tasks that hold a node and those waiting for one.

    A gang (a ``hosts`` service, a Job) is one job: all or nothing. A service whose replicas are
    placed one by one (every other mode) is one job of its placed replicas plus one single-task job
    per waiting replica, all named ``<deployment>/<service>``: each waiting replica still gets its own
    node choice, in order, as an elastic job's extras would, but the engine places a run of identical
    single-task jobs in one pass where it would revisit a 10,000-task elastic job once per task.
    """
    tasks = [*holding, *waiting]
    job = job_for(key, level, tasks)
    if level.get("owner_kind") != DEPLOYMENT or job.min_available != 1 or not waiting:
        return [job]
    placed = [job_for(key, level, holding)] if holding else []
    return [*placed, *(dataclasses.replace(job, tasks=(task,)) for task in waiting)]


def job_for(key: str, level: dict[str, Any], tasks: list[Task]) -> Job:
    """The core job of a service or Job: its own fields from ``level`` (the owner's spec)."""
    priority = int(level.get("priority", DEFAULT_JOB_PRIORITY))
    placement = level.get("placement")
    if level.get("owner_kind") == DEPLOYMENT:
        # hosts: all replicas or none (JACO C4); every other service places replicas one by one.
        wanted = int(level.get("replicas", len(tasks))) if placement == "hosts" else 1
        min_available = max(1, min(wanted, len(tasks)))
    else:
        min_available = max(1, min(int(level.get("min_available", len(tasks))), len(tasks)))
    return Job(
        name=key,
        tasks=tuple(tasks),
        queue=str(level.get("queue", DEFAULT_QUEUE)),
        priority=priority,
        preemptible=bool(level.get("preemptible", priority < PREEMPTIBLE_BELOW_PRIORITY)),
        min_available=min_available,
        profile=PLACEMENT_PROFILES.get(str(placement)) if placement else None,
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
