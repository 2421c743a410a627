"""The queue tree: parents, children, leaves and the quota arrays, indexed by integers.

A queue is an integer ``q`` = its position in the caller's queue list, which is also its age (the list
is oldest first, so a smaller index is an older queue). Quotas are arrays laid out (resources, queues)
over a fixed resource tuple chosen by the caller, in canonical integer units (``core/resources.py``).

A resource not named in a queue's ``deserved`` or ``limit`` is *ungoverned* by it (the scenario
spec: "not governed by that quota (unlimited)"). ``deserved_set`` / ``limit_set`` record which entries
are governed; the value arrays hold 0 where a resource is ungoverned, so an ungoverned deserved counts
as 0 when fair share is divided (``shares.py``) and as unlimited in every quota check
(``entitlement.py``, ``capacity.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from loadmaster.core.model import Queue
from loadmaster.core.resources import scale_of

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

NO_PARENT = -1


class QueueConfigError(ValueError):
    """An invalid queue list; the message starts with the field path, e.g. ``queues[2].parent``."""


@dataclass(frozen=True, slots=True, eq=False)
class QueueTree:
    """An immutable queue hierarchy. Build it with :meth:`build`."""

    names: tuple[str, ...]
    resources: tuple[str, ...]
    parent: tuple[int, ...]  # NO_PARENT for a top-level queue
    children: tuple[tuple[int, ...], ...]  # in age order
    top: tuple[int, ...]  # top-level queues in age order
    depth: tuple[int, ...]  # 0 for a top-level queue
    paths: tuple[IntArray, ...]  # paths[q] = q, its parent, ..., its top-level ancestor
    deserved: IntArray  # deserved[r, q], 0 where ungoverned
    deserved_set: BoolArray  # deserved_set[r, q]: queue q names resource r in deserved
    limit: IntArray  # limit[r, q], 0 where ungoverned
    limit_set: BoolArray  # limit_set[r, q]: queue q names resource r in limit
    priority: tuple[int, ...]
    over_quota_weight: tuple[float, ...]
    scale: npt.NDArray[np.float64]  # scale[r]: canonical units per user-facing unit (resources.scale_of)

    @staticmethod
    def build(queues: Sequence[Queue], resources: Sequence[str]) -> QueueTree:
        """Validate ``queues`` (oldest first) and index them; errors name the field path."""
        resource_tuple = tuple(resources)
        if len(set(resource_tuple)) != len(resource_tuple):
            raise QueueConfigError(f"resources: duplicate names in {resource_tuple}")
        index = _index_names(queues)
        parent = tuple(_parent_index(i, queue, index) for i, queue in enumerate(queues))
        depth = tuple(_depth(i, parent, queues) for i in range(len(queues)))
        children = tuple(tuple(c for c in range(len(queues)) if parent[c] == q) for q in range(len(queues)))
        paths = tuple(np.array(_path(q, parent), dtype=np.int64) for q in range(len(queues)))
        deserved, deserved_set = _quota_arrays(queues, resource_tuple, "deserved")
        limit, limit_set = _quota_arrays(queues, resource_tuple, "limit")
        for i, queue in enumerate(queues):
            weight = queue.over_quota_weight
            valid = isinstance(weight, int | float) and not isinstance(weight, bool)
            if not valid or not math.isfinite(weight) or weight < 0:
                raise QueueConfigError(
                    f"queues[{i}].over_quota_weight: must be a finite number >= 0, got {weight!r}"
                )
        return QueueTree(
            names=tuple(q.name for q in queues),
            resources=resource_tuple,
            parent=parent,
            children=children,
            top=tuple(q for q in range(len(queues)) if parent[q] == NO_PARENT),
            depth=depth,
            paths=paths,
            deserved=deserved,
            deserved_set=deserved_set,
            limit=limit,
            limit_set=limit_set,
            priority=tuple(q.priority for q in queues),
            over_quota_weight=tuple(float(q.over_quota_weight) for q in queues),
            scale=np.array([scale_of(r) for r in resource_tuple], dtype=np.float64),
        )

    @property
    def size(self) -> int:
        return len(self.names)

    def index_of(self, name: str) -> int:
        """The queue's index; ``KeyError`` naming the queue if there is none."""
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"unknown queue {name!r}") from None

    def is_leaf(self, queue: int) -> bool:
        return not self.children[queue]

    @property
    def leaves(self) -> tuple[int, ...]:
        return tuple(q for q in range(self.size) if not self.children[q])

    def top_down(self) -> tuple[int, ...]:
        """Every queue, parents before children (breadth first, age order within a level)."""
        order: list[int] = list(self.top)
        for queue in order:  # the list grows while it is walked: a breadth-first traversal
            order.extend(self.children[queue])
        return tuple(order)

    def siblings(self, queue: int) -> tuple[int, ...]:
        """Queues with the same parent (top-level queues are siblings of each other), itself included."""
        parent = self.parent[queue]
        return self.top if parent == NO_PARENT else self.children[parent]

    def leveled(self, first: int, second: int) -> tuple[int, int]:
        """The ancestors of two different queues that are children of their lowest common ancestor.

        For two queues in different top-level subtrees these are the two top-level ancestors. A queue
        that is an ancestor of the other has no such pair: ``ValueError``.
        """
        first_path = self.paths[first][::-1].tolist()  # top-level ancestor first
        second_path = self.paths[second][::-1].tolist()
        for a, b in zip(first_path, second_path, strict=False):
            if a != b:
                return a, b
        raise ValueError(
            f"queue {self.names[first]} and queue {self.names[second]} are on one branch of the tree"
        )


def _index_names(queues: Sequence[Queue]) -> dict[str, int]:
    index: dict[str, int] = {}
    for i, queue in enumerate(queues):
        if not isinstance(queue.name, str) or not queue.name:
            raise QueueConfigError(f"queues[{i}].name: must be a non-empty string")
        if queue.name in index:
            raise QueueConfigError(f'queues[{i}].name: duplicate queue "{queue.name}"')
        index[queue.name] = i
    return index


def _parent_index(i: int, queue: Queue, index: dict[str, int]) -> int:
    if queue.parent is None:
        return NO_PARENT
    if queue.parent not in index:
        raise QueueConfigError(f'queues[{i}].parent: unknown queue "{queue.parent}"')
    if queue.parent == queue.name:
        raise QueueConfigError(f'queues[{i}].parent: queue "{queue.name}" cannot be its own parent')
    return index[queue.parent]


def _depth(queue: int, parent: tuple[int, ...], queues: Sequence[Queue]) -> int:
    seen = [queue]
    current = parent[queue]
    while current != NO_PARENT:
        if current in seen:
            cycle = " -> ".join(queues[q].name for q in [*seen[seen.index(current) :], current])
            raise QueueConfigError(f"queues[{queue}].parent: the parents form a cycle ({cycle})")
        seen.append(current)
        current = parent[current]
    return len(seen) - 1


def _path(queue: int, parent: tuple[int, ...]) -> list[int]:
    path = [queue]
    while parent[path[-1]] != NO_PARENT:
        path.append(parent[path[-1]])
    return path


def _quota_arrays(
    queues: Sequence[Queue], resources: tuple[str, ...], field: str
) -> tuple[IntArray, BoolArray]:
    values = np.zeros((len(resources), len(queues)), dtype=np.int64)
    present = np.zeros((len(resources), len(queues)), dtype=np.bool_)
    for q, queue in enumerate(queues):
        quota: dict[str, int] = getattr(queue, field)
        for name, amount in quota.items():
            if name not in resources:
                raise QueueConfigError(
                    f'queues[{q}].{field}.{name}: resource "{name}" is not among the cluster\'s resources '
                    f"({', '.join(resources)})"
                )
            if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
                raise QueueConfigError(
                    f"queues[{q}].{field}.{name}: must be a non-negative integer amount, got {amount!r}"
                )
            r = resources.index(name)
            values[r, q] = amount
            present[r, q] = True
    return values, present
