"""The queue-tree walk of ``ordering.py``, kept up to date incrementally (a tournament tree).

``ordering.next_leaf`` compares every sibling group from the top down on every call. Here every group
keeps its winner between calls, and a walk only redoes the groups something changed in:

* queue ``q``'s standing (``standing.py``) is a function of ``allocated[:, q]``, the offer of ``q``'s
  best leaf (the leaf's own offer for a leaf), and inputs fixed for the session (fair share, deserved,
  limits, priority, age). Nothing global enters it, so it changes only when one of those two changes;
* the winner of a group (the best child by ``compare_queues``, scanned in age order so that the first
  of equals stays chosen, exactly as ``ordering._walk``) changes only when a child's standing does;
* a parent's best (leaf, offer) is its group winner's, so a changed winner makes the parent's standing
  stale in turn.

Invalidation comes from the data, not from callers: each walk compares the live ``usage.allocated``
with the copy it saw last, so allocations, evictions and rollbacks, in any queue, are all seen; offers
change only through :meth:`QueueTournament.set_offer`. Stale groups are redone deepest first, so a
group is scanned after every group below it. An allocation touches one leaf-to-top path: about one
standing and one group scan per level instead of every group of the tree.
"""

from __future__ import annotations

import numpy as np

from loadmaster.queues.hierarchy import NO_PARENT, IntArray, QueueTree
from loadmaster.queues.standing import QueueStanding, Rank, compare_queues, rank_of
from loadmaster.queues.standing_inputs import StandingInputs
from loadmaster.queues.usage import QueueUsage

Found = tuple[int, tuple[int, ...]]  # (a leaf, its offer): the best of a subtree
Ranked = tuple[Rank, QueueStanding]  # a standing with its rules 1-6 as a tuple, compared first


class QueueTournament:
    """Which leaf goes next (``as_victims``: gives the next victim), for offers that change over time.

    ``winner(usage)`` returns what ``ordering.next_leaf`` (``next_victim_leaf``) would return for the
    same tree, fair share, usage and offers.
    """

    def __init__(self, tree: QueueTree, fair_share: IntArray, *, as_victims: bool = False) -> None:
        self.tree = tree
        self._inputs = StandingInputs(tree, fair_share)
        self._as_victims = as_victims
        self._seen: IntArray | None = None  # usage.allocated as of the last walk
        self._allocated: list[list[int]] = [[] for _ in range(tree.size)]
        self._best: list[Found | None] = [None] * tree.size  # per queue: the best leaf of its subtree
        self._standing: list[Ranked | None] = [None] * tree.size
        self._stale: set[int] = set()  # queues whose standing must be recomputed
        # groups to rescan, by the depth of their members; a group is named by its parent (NO_PARENT: top)
        self._rescan: list[set[int]] = [set() for _ in range(max(tree.depth, default=0) + 1)]
        self._top: Found | None = None

    def set_offer(self, leaf: int, amount: IntArray | None) -> None:
        """The leaf's offer: its best pending job's request, or (as victims) the victims taken from it
        plus its next one; ``None`` when it has nothing to offer."""
        if not 0 <= leaf < self.tree.size or not self.tree.is_leaf(leaf):
            raise ValueError(f"offers are made by leaf queues; queue index {leaf} is not a leaf")
        if amount is not None and amount.shape != (len(self.tree.resources),):
            raise ValueError(f"offer: expected shape {(len(self.tree.resources),)}, got {amount.shape}")
        found = None if amount is None else (leaf, tuple(amount.tolist()))
        if found != self._best[leaf]:
            self._best[leaf] = found
            self._mark_stale(leaf)

    def winner(self, usage: QueueUsage) -> int | None:
        """The leaf the walk from the top ends at; ``None`` when no leaf has an offer."""
        if usage.tree is not self.tree:
            raise ValueError("usage belongs to another queue tree")
        self._see(usage.allocated)
        for groups in reversed(self._rescan):  # deepest first: a group after every group below it
            while groups:
                self._scan(groups.pop())
        return None if self._top is None else self._top[0]

    def _see(self, allocated: IntArray) -> None:
        """Mark stale every queue whose allocation changed since the last walk."""
        if self._seen is None:
            self._seen = allocated.copy()
            changed: list[int] = list(range(self.tree.size))
        else:
            changed = (allocated != self._seen).any(axis=0).nonzero()[0].tolist()
            if not changed:
                return
            np.copyto(self._seen, allocated)
        columns = allocated.T.tolist()  # all of them: one call, cheaper than picking the changed ones
        for queue in changed:
            self._allocated[queue] = columns[queue]
            self._mark_stale(queue)

    def _mark_stale(self, queue: int) -> None:
        self._stale.add(queue)
        self._rescan[self.tree.depth[queue]].add(self.tree.parent[queue])

    def _scan(self, group: int) -> None:
        """Redo one sibling group's comparison; pass a changed winner up to the parent."""
        members = self.tree.top if group == NO_PARENT else self.tree.children[group]
        chosen: Ranked | None = None
        for queue in members:  # age order: the first of equals stays chosen
            if queue in self._stale:
                self._stale.discard(queue)
                self._standing[queue] = self._standing_of(queue)
            ranked = self._standing[queue]
            if ranked is not None and (chosen is None or self._goes_before(ranked, chosen)):
                chosen = ranked
        found = None if chosen is None else self._best[chosen[1].queue]
        if group == NO_PARENT:
            self._top = found
        elif found != self._best[group]:
            self._best[group] = found
            self._mark_stale(group)

    def _standing_of(self, queue: int) -> Ranked | None:
        found = self._best[queue]
        if found is None:
            return None
        offer = found[1]
        if self._as_victims:
            standing = self._inputs.standing(queue, self._allocated[queue], victims=offer)
        else:
            standing = self._inputs.standing(queue, self._allocated[queue], job=offer)
        return rank_of(standing), standing

    def _goes_before(self, a: Ranked, b: Ranked) -> bool:
        """``compare_queues(a, b) < 0`` (``> 0`` as victims), from the ranks where they differ."""
        if a[0] != b[0]:
            return a[0] > b[0] if self._as_victims else a[0] < b[0]
        order = compare_queues(a[1], b[1])
        return order > 0 if self._as_victims else order < 0
