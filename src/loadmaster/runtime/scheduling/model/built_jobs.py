"""The jobs a cycle's cluster is assembled from, kept assembled between cycles.

A job key (a service or a Job) whose replicas did not change and has nothing Pending builds the same
core jobs every cycle, so its ``BuiltJob`` is kept (``settle``) until one of its replicas changes
(``forget``). Keys still to build each cycle are tracked too (``unbuilt``): the ones that changed and
the ones with Pending replicas (a backoff ends with time, not with an event).

What a cycle needs from the kept ones is kept assembled as they come and go, so a cycle costs work in
proportion to what changed, plus a few copies done in C, not a Python step per job in the cluster:

* ``_ages`` / ``_groups``: the kept keys with core jobs, and those jobs, in age order (the cluster's
  job order), side by side;
* ``_flat``: their jobs flattened, valid for the first ``len(_ends) - 1`` groups (``_ends[g]``: how many
  jobs the first g groups hold). A group coming or going at position g invalidates from g on, and the
  next assembly flattens only from there: changes come at the young end;
* ``_replicas``: every replica in them, by name;
* ``_implicit``: how many kept keys count their work under each queue that does not exist.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import chain

from loadmaster.core.model import Job
from loadmaster.runtime.scheduling.model.model_entries import ReplicaState

Age = tuple[int, int, str]


@dataclass(slots=True)
class BlockedReplica:
    replica: ReplicaState
    reason: str
    message: str
    failure: str = "queue_not_found"  # the reason label of loadmaster_failures_total
    not_before: datetime | None = None  # not tried again before this (a time-slot's window opens)


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


@dataclass(slots=True)
class Assembly:
    """One cycle's jobs in age order, with every replica they hold and what Pending work they saw."""

    jobs: tuple[Job, ...]
    replicas: dict[str, ReplicaState]
    attempted: list[ReplicaState] = field(default_factory=list)
    blocked: list[BlockedReplica] = field(default_factory=list)
    implicit_queues: set[str] = field(default_factory=set)


class BuiltJobs:
    def __init__(self) -> None:
        self._kept: dict[str, BuiltJob] = {}
        self.unbuilt: set[str] = set()
        self._ages: list[tuple[Age, str]] = []  # kept keys with jobs, sorted
        self._groups: list[list[Job]] = []  # their jobs, at the same positions
        self._flat: tuple[Job, ...] = ()
        self._ends: list[int] = [0]
        self._replicas: dict[str, ReplicaState] = {}
        self._implicit: Counter[str] = Counter()

    def forget(self, key: str) -> None:
        """The key's replicas (or what they are built from) changed: build it again next cycle."""
        self.unbuilt.add(key)
        built = self._kept.pop(key, None)
        if built is None:
            return
        for name in built.replicas:
            del self._replicas[name]
        if built.implicit_queue is not None:
            self._implicit[built.implicit_queue] -= 1
            if not self._implicit[built.implicit_queue]:
                del self._implicit[built.implicit_queue]
        if built.jobs:
            at = bisect_left(self._ages, (built.age, key))
            del self._ages[at], self._groups[at], self._ends[at + 1 :]

    def forget_all(self, keys: Iterable[str]) -> None:
        for key in list(keys):
            self.forget(key)

    def drop(self, key: str) -> None:
        """The key has no replicas left."""
        self.forget(key)
        self.unbuilt.discard(key)

    def settle(self, key: str, built: BuiltJob) -> None:
        """Keep a key built with nothing Pending until one of its replicas changes."""
        self.forget(key)
        self.unbuilt.discard(key)
        self._kept[key] = built
        self._replicas.update(built.replicas)
        if built.implicit_queue is not None:
            self._implicit[built.implicit_queue] += 1
        if built.jobs:
            at = bisect_left(self._ages, (built.age, key))
            self._ages.insert(at, (built.age, key))
            self._groups.insert(at, built.jobs)
            del self._ends[at + 1 :]

    def assemble(self, transient: list[tuple[str, BuiltJob]]) -> Assembly:
        """The kept keys plus ``transient`` ones (built this cycle, not kept), in age order.

        Copies are made so that the model may change while the cycle runs (it runs in a thread)."""
        flat = self._flattened()
        assembly = Assembly(flat, dict(self._replicas), implicit_queues=set(self._implicit))
        for _, built in transient:
            assembly.replicas.update(built.replicas)
            assembly.attempted.extend(built.attempted)
            assembly.blocked.extend(built.blocked)
            if built.implicit_queue is not None:
                assembly.implicit_queues.add(built.implicit_queue)
        # Each transient's jobs go between the kept ones at its age: a few slices of the flat tuple.
        pieces: list[Sequence[Job]] = []
        start = 0
        for age, key, jobs in sorted((built.age, key, built.jobs) for key, built in transient if built.jobs):
            at = self._ends[bisect_left(self._ages, (age, key))]
            pieces += [flat[start:at], jobs]
            start = at
        if pieces:
            assembly.jobs = tuple(chain.from_iterable([*pieces, flat[start:]]))
        return assembly

    def _flattened(self) -> tuple[Job, ...]:
        """Every kept job in age order, flattening only the groups past the still valid prefix."""
        valid = len(self._ends) - 1
        if valid < len(self._groups) or len(self._flat) != self._ends[-1]:  # came or went past ``valid``
            tail = self._groups[valid:]
            self._flat = self._flat[: self._ends[-1]] + tuple(chain.from_iterable(tail))
            end = self._ends[-1]
            for group in tail:
                end += len(group)
                self._ends.append(end)
        return self._flat
