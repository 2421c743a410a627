"""Order ``service_pack`` (a service's ``pack`` mode, JACO C3 with the AVA tie-break; conflict 1).

The replica goes to the feasible node with the fewest active replicas of any service ("replicas pile
onto the lowest-loaded host first"); ties by the AVA 4-level order (fewest of (1) the same job not in
delayed shutdown, (2) the same job in delayed shutdown, (3) other jobs not in, (4) other jobs in
delayed shutdown), then by node name. Counts are live: a replica placed earlier in the cycle counts.
Packed into one key, 12 bits per field (counts capped at 4,095 per node), the engine taking the highest:

    key(n) = ORDER_TOP - (total, same, same_delayed, other, other_delayed) as 5 x 12-bit digits

Local: a placement on node n changes only node n's key, so runs of replicas use the engine's cached
totals (one O(tasks) count per refreshed node, not per node).
"""

from __future__ import annotations

import numpy as np

from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer
from loadmaster.placement.plugins.replica_counts import (
    active_per_node,
    delayed_indices,
    delayed_tasks,
    job_task_indices,
)

FIELD_BITS = 12
FIELD_MAX = (1 << FIELD_BITS) - 1
ORDER_TOP = 1 << 62


class ServicePack(Scorer):
    name, normalized, lexicographic = "service_pack", False, True

    def applies(self, ctx: TaskContext) -> bool:
        return True

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        snapshot = ctx.snapshot
        delayed = delayed_tasks(snapshot)
        own = job_task_indices(snapshot, int(snapshot.task_job[ctx.t]))
        own_delayed = own[delayed[own]]
        same_delayed = active_per_node(snapshot, own_delayed)
        same = active_per_node(snapshot, own) - same_delayed
        every_delayed = active_per_node(snapshot, delayed_indices(snapshot, delayed))
        total = active_per_node(snapshot)
        other_delayed = every_delayed - same_delayed
        other = total - same - same_delayed - other_delayed
        key = np.zeros(snapshot.n_nodes, dtype=np.int64)
        for level in (total, same, same_delayed, other, other_delayed):
            key = (key << FIELD_BITS) + np.minimum(level, FIELD_MAX)
        return (ORDER_TOP - key)[cols]
