"""One deployment's replicas by service and index, kept current one replica at a time.

The deployment controller's questions about a service (how many active replicas, the highest ones to
scale down, the lowest one of another spec, whether a replica of some spec is not Running, the
replacements in flight) are answered here without walking the service: each replica change costs
O(log n) (a bisect into sorted index lists), each question O(1) or O(log n) (the number of distinct
spec hashes, one or two, aside). The controller loop keeps one ``DeploymentSlots`` per deployment from
its cache listener, so a rollout step's pass costs what changed, not the service's size
(``bench/rollout.py``). Tests and small callers build one from a list (``DeploymentSlots.of``).

*Active* replicas fill a slot: indexed, not leaving (Terminating/Terminated), not a replacement.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from loadmaster.controllers.views import RUNNING, ReplicaView


def _insert(values: list[int], value: int) -> None:
    position = bisect.bisect_left(values, value)
    if position == len(values) or values[position] != value:
        values.insert(position, value)


def _discard(values: list[int], value: int) -> None:
    position = bisect.bisect_left(values, value)
    if position < len(values) and values[position] == value:
        del values[position]


@dataclass(slots=True)
class ServiceSlots:
    active: dict[int, ReplicaView] = field(default_factory=dict)  # by index
    indices: list[int] = field(default_factory=list)  # of the active replicas, sorted
    by_hash: dict[str, list[int]] = field(default_factory=dict)  # spec hash -> sorted active indices
    not_running: dict[str, set[int]] = field(default_factory=dict)  # spec hash -> active, not Running
    replacements: dict[str, ReplicaView] = field(default_factory=dict)  # by the name they replace
    others: dict[str, ReplicaView] = field(default_factory=dict)  # leaving, or without an index
    recorded: list[int] = field(default_factory=list)  # every index with a record (leaving too), sorted

    def __len__(self) -> int:
        return len(self.active)

    def add(self, replica: ReplicaView) -> None:
        if replica.index is not None:
            _insert(self.recorded, replica.index)
        if replica.replaces is not None and not replica.is_leaving:
            self.replacements[replica.replaces] = replica
            return
        if replica.is_leaving or replica.index is None or replica.replaces is not None:
            self.others[replica.name] = replica
            return
        index = replica.index
        self.active[index] = replica
        _insert(self.indices, index)
        _insert(self.by_hash.setdefault(replica.spec_hash, []), index)
        if replica.phase != RUNNING:
            self.not_running.setdefault(replica.spec_hash, set()).add(index)

    def swap(self, old: ReplicaView, new: ReplicaView) -> bool:
        """Put ``new`` where ``old`` (the view added for its name) is, if both have the same place (O(1));
        False, changing nothing, when the place differs or ``old`` is not where ``add`` put it."""
        if _place(old) != _place(new):
            return False
        if new.replaces is not None and not new.is_leaving:
            if self.replacements.get(new.replaces) is not old:
                return False
            self.replacements[new.replaces] = new
        elif new.is_leaving or new.index is None or new.replaces is not None:
            if self.others.get(new.name) is not old:
                return False
            self.others[new.name] = new
        else:
            if new.index is None or self.active.get(new.index) is not old:
                return False
            self.active[new.index] = new
        return True

    def remove(self, replica: ReplicaView) -> None:
        """Forget ``replica`` (the view that was added for its name)."""
        if replica.replaces is not None and self.replacements.get(replica.replaces) is replica:
            del self.replacements[replica.replaces]
        was_other = self.others.pop(replica.name, None) is not None
        if not was_other and replica.index is not None and self.active.get(replica.index) is replica:
            del self.active[replica.index]
            _discard(self.indices, replica.index)
            same = self.by_hash.get(replica.spec_hash, [])
            _discard(same, replica.index)
            if not same:
                self.by_hash.pop(replica.spec_hash, None)
            waiting = self.not_running.get(replica.spec_hash)
            if waiting is not None:
                waiting.discard(replica.index)
                if not waiting:
                    del self.not_running[replica.spec_hash]
        if replica.index is not None and not self._has_record(replica.index):
            _discard(self.recorded, replica.index)

    def _has_record(self, index: int) -> bool:
        """Whether a replica still holds ``index`` (O(leaving + in flight) records, a few)."""
        if index in self.active:
            return True
        held = (*self.others.values(), *self.replacements.values())
        return any(r.index == index for r in held)

    # -- questions -------------------------------------------------------------------------------------

    def every(self) -> list[ReplicaView]:
        """Every replica of the service, replacements too, by name (O(n): a service removed, a global one)."""
        views = [*self.active.values(), *self.others.values(), *self.replacements.values()]
        return sorted(views, key=lambda r: r.name)

    def highest_recorded(self) -> int:
        """The highest index any record holds (-1: none): never handed out again."""
        return self.recorded[-1] if self.recorded else -1

    def surplus(self, wanted: int) -> list[ReplicaView]:
        """The active replicas above the first ``wanted`` indices, highest first."""
        extra = len(self.indices) - wanted
        return [self.active[i] for i in reversed(self.indices[-extra:])] if extra > 0 else []

    def kept(self, wanted: int) -> Iterator[ReplicaView]:
        """The active replicas of the first ``wanted`` indices, lowest first (O(wanted): for tests)."""
        return (self.active[i] for i in self.indices[:wanted])

    def lowest_other_than(self, spec_hash: str, within: int) -> ReplicaView | None:
        """The lowest-index active replica among the first ``within`` whose hash is not ``spec_hash``."""
        limit = self.indices[within - 1] if 0 < within <= len(self.indices) else None
        best: int | None = None
        for other, indices in self.by_hash.items():
            if other != spec_hash and indices and (best is None or indices[0] < best):
                best = indices[0]
        if best is None or within <= 0 or (limit is not None and best > limit):
            return None
        return self.active[best]

    def any_not_running(self, spec_hash: str) -> bool:
        return bool(self.not_running.get(spec_hash))

    def position(self, index: int) -> int:
        """1 + how many active indices are below ``index`` (its step number in a rollout)."""
        return bisect.bisect_left(self.indices, index) + 1


@dataclass(slots=True)
class DeploymentSlots:
    """``ServiceSlots`` per service of one deployment, and every replica's view by name."""

    services: dict[str | None, ServiceSlots] = field(default_factory=dict)
    views: dict[str, ReplicaView] = field(default_factory=dict)

    @classmethod
    def of(cls, replicas: Iterable[ReplicaView]) -> DeploymentSlots:
        slots = cls()
        for replica in replicas:
            slots.put(replica)
        return slots

    def put(self, replica: ReplicaView) -> None:
        """Add or update the replica named ``replica.name``. A newer view in the same place (a status
        write: the scheduler's ``wait`` conditions, 10,000 a cycle at a big backlog) only swaps views."""
        old = self.views.get(replica.name)
        same_service = old is not None and old.service == replica.service
        if old is not None and same_service and self.services[old.service].swap(old, replica):
            self.views[replica.name] = replica
            return
        self.drop(replica.name)
        self.views[replica.name] = replica
        self.services.setdefault(replica.service, ServiceSlots()).add(replica)

    def drop(self, name: str) -> None:
        old = self.views.pop(name, None)
        if old is not None:
            service = self.services[old.service]
            service.remove(old)

    def service(self, name: str | None) -> ServiceSlots:
        found = self.services.get(name)  # not `or`: a service whose replicas all leave has len() 0
        return found if found is not None else ServiceSlots()


def _place(replica: ReplicaView) -> tuple[object, ...]:
    """What decides where ``ServiceSlots.add`` files a view and which indexes hold it."""
    return (
        replica.name,
        replica.index,
        replica.replaces,
        replica.is_leaving,
        replica.spec_hash,
        replica.phase == RUNNING,
    )
