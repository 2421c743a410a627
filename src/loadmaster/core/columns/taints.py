"""Taints as a (distinct taints, nodes) boolean matrix, so toleration checks are vector operations.

A task's tolerations are checked once against each *distinct* taint in the cluster (a handful), then
the untolerated rows are OR-ed (hard effects) or summed (PreferNoSchedule) over nodes.
The implied taint of a cordoned node is handled by the ``unschedulable`` filter, not here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from loadmaster.core.model import UNSCHEDULABLE_TAINT_KEY, Node, Taint, TaintEffect, Toleration

BoolArray = npt.NDArray[np.bool_]
# The effects that keep a task off a node (PreferNoSchedule only lowers the node's score).
HARD_EFFECTS: tuple[TaintEffect, ...] = ("NoSchedule", "NoExecute")
CORDON_TAINT = Taint(UNSCHEDULABLE_TAINT_KEY, "", "NoSchedule")


def tolerates(tolerations: Sequence[Toleration], taint: Taint) -> bool:
    return any(toleration.tolerates(taint) for toleration in tolerations)


class TaintIndex:
    def __init__(self, nodes: Sequence[Node]) -> None:
        distinct: dict[Taint, int] = {}
        for node in nodes:
            for taint in node.taints:
                distinct.setdefault(taint, len(distinct))
        self.taints: tuple[Taint, ...] = tuple(distinct)
        self.has = np.zeros((len(self.taints), len(nodes)), dtype=np.bool_)
        for n, node in enumerate(nodes):
            for taint in node.taints:
                self.has[distinct[taint], n] = True
        self._hard = np.array([t.effect in HARD_EFFECTS for t in self.taints], dtype=np.bool_)
        self._cache: dict[tuple[Toleration, ...], tuple[BoolArray, npt.NDArray[np.int64]]] = {}

    def untolerated(self, tolerations: tuple[Toleration, ...]) -> tuple[BoolArray, npt.NDArray[np.int64]]:
        """(nodes with an untolerated NoSchedule/NoExecute taint, count of untolerated PreferNoSchedule)."""
        cached = self._cache.get(tolerations)
        if cached is None:
            missed = np.array([not tolerates(tolerations, t) for t in self.taints], dtype=np.bool_)
            hard_rows = self.has[missed & self._hard]
            prefer_rows = self.has[missed & ~self._hard]
            result = (np.asarray(hard_rows.any(axis=0)), np.asarray(prefer_rows.sum(axis=0, dtype=np.int64)))
            self._cache[tolerations] = result
            return result
        return cached

    def first_untolerated(self, tolerations: tuple[Toleration, ...], n: int) -> Taint | None:
        """The first hard taint of node ``n`` the task does not tolerate (for messages)."""
        for row, taint in enumerate(self.taints):
            if self.has[row, n] and self._hard[row] and not tolerates(tolerations, taint):
                return taint
        return None
