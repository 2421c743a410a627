"""Every node's device sizes and expected usable GPU, kept for one snapshot and refreshed where it changed.

The fragmentation score needs, for each candidate node, the node as it is (``before``) and as it would be
with the task (``after``). ``before`` does not depend on the task, so it is computed once per node and
recomputed only for the nodes the Statement logged as changed (``core/working/node_changes.py``), the way the
engine's per-class totals are (``totals_cache.py``): a cycle placing thousands of tasks computes each
node's ``before`` once per change instead of once per candidate task.
"""

from __future__ import annotations

import numpy as np

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.core.working.node_changes import NodeChanges
from loadmaster.placement.gpu_fragmentation import (
    Float32Array,
    IntArray,
    ShapeTable,
    capacity_by_size,
    expected_usable,
    free_cpu_memory,
    free_devices,
)


class UsableCache:
    """``capacity[s, n]`` (``capacity_by_size``) and ``usable[n]`` = ``sum_k p_k U_k`` of every node, as of
    the last ``refresh``."""

    def __init__(self, snapshot: ClusterSnapshot, table: ShapeTable) -> None:
        self._snapshot, self._table = snapshot, table
        self._changes = NodeChanges.of(snapshot)
        self._mark = self._changes.mark()
        every = np.arange(snapshot.n_nodes, dtype=np.int64)
        self.capacity, self.usable = self._compute(every)

    @classmethod
    def of(cls, snapshot: ClusterSnapshot) -> UsableCache:
        """The snapshot's cache (made on first use), refreshed to its current state."""
        cache = snapshot.memo.get(("gpu_usable_cache",))
        if cache is None:
            cache = snapshot.memo[("gpu_usable_cache",)] = cls(snapshot, ShapeTable.of(snapshot))
        assert isinstance(cache, UsableCache)
        cache.refresh()
        return cache

    def refresh(self) -> None:
        changed = self._changes.since(self._mark)
        if changed is None:  # the log was cleared: recompute every node
            changed = np.arange(self._snapshot.n_nodes, dtype=np.int64)
        if changed.size:
            capacity, usable = self._compute(changed)
            self.capacity[:, changed] = capacity
            self.usable[changed] = usable
        self._mark = self._changes.mark()

    def _compute(self, nodes: IntArray) -> tuple[Float32Array, Float32Array]:
        capacity = capacity_by_size(free_devices(self._snapshot, nodes), self._table.sizes)
        cpu, memory = free_cpu_memory(self._snapshot, nodes)
        return capacity, expected_usable(self._table, capacity, cpu, memory, nodes)
