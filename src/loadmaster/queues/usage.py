"""Live queue accounting: what every queue has allocated, in total and to non-preemptible jobs.

A leaf's allocation is also its ancestors' allocation, so every change propagates up the tree. The
session updates this as tasks are placed or evicted during a cycle (KAI's Allocate/Deallocate events),
so ordering and checks later in the same cycle see earlier placements. ``allocate`` and ``release`` are
exact inverses (integer arithmetic), which is what a Statement's rollback needs.
"""

from __future__ import annotations

import numpy as np

from loadmaster.queues.hierarchy import IntArray, QueueTree


class QueueUsage:
    """``allocated[r, q]`` and ``allocated_non_preemptible[r, q]`` over a :class:`QueueTree`."""

    __slots__ = ("allocated", "allocated_non_preemptible", "tree")

    def __init__(self, tree: QueueTree, allocated: IntArray, allocated_non_preemptible: IntArray) -> None:
        shape = (len(tree.resources), tree.size)
        if allocated.shape != shape or allocated_non_preemptible.shape != shape:
            raise ValueError(f"queue usage arrays must have shape {shape}")
        self.tree = tree
        self.allocated = allocated
        self.allocated_non_preemptible = allocated_non_preemptible

    @classmethod
    def empty(cls, tree: QueueTree) -> QueueUsage:
        shape = (len(tree.resources), tree.size)
        return cls(tree, np.zeros(shape, dtype=np.int64), np.zeros(shape, dtype=np.int64))

    def copy(self) -> QueueUsage:
        return QueueUsage(self.tree, self.allocated.copy(), self.allocated_non_preemptible.copy())

    def allocate(self, leaf: int, request: IntArray, preemptible: bool) -> None:
        """Count ``request`` against ``leaf`` and every ancestor."""
        self._check(leaf, request)
        path = self.tree.paths[leaf]
        self.allocated[:, path] += request[:, None]
        if not preemptible:
            self.allocated_non_preemptible[:, path] += request[:, None]

    def release(self, leaf: int, request: IntArray, preemptible: bool) -> None:
        """The exact inverse of ``allocate(leaf, request, preemptible)``.

        Releasing more than is allocated is a caller bug (a task released twice, or released from the
        wrong queue): it raises ``ValueError`` and changes nothing.
        """
        self._check(leaf, request)
        path = self.tree.paths[leaf]
        arrays = [self.allocated] if preemptible else [self.allocated, self.allocated_non_preemptible]
        for array in arrays:
            if (array[:, path] < request[:, None]).any():
                raise ValueError(
                    f"queue {self.tree.names[leaf]}: releasing more than is allocated "
                    f"({'all' if array is self.allocated else 'non-preemptible'} jobs)"
                )
        for array in arrays:
            array[:, path] -= request[:, None]

    def shift(self, leaf: int, request: IntArray, preemptible: bool, sign: int) -> None:
        """``allocate`` (sign +1) or ``release`` (sign -1) without the argument checks: for the
        Statement's listener, whose requests come from the snapshot and whose undo is exact."""
        path = self.tree.paths[leaf]
        delta = sign * request[:, None]
        self.allocated[:, path] += delta
        if not preemptible:
            self.allocated_non_preemptible[:, path] += delta

    def _check(self, leaf: int, request: IntArray) -> None:
        if not 0 <= leaf < self.tree.size:
            raise IndexError(f"no queue with index {leaf}")
        if request.shape != (len(self.tree.resources),):
            raise ValueError(f"request: expected shape {(len(self.tree.resources),)}, got {request.shape}")
        if (request < 0).any():
            raise ValueError("request must not be negative")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, QueueUsage):
            return NotImplemented
        return (
            self.tree is other.tree
            and np.array_equal(self.allocated, other.allocated)
            and np.array_equal(self.allocated_non_preemptible, other.allocated_non_preemptible)
        )

    __hash__ = None  # type: ignore[assignment]  # mutable: not hashable
