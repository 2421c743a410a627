"""Order ``service_spread`` (a service's ``spread`` mode, JACO C2 made even and stable; conflict 4).

Among the feasible nodes only those with the fewest active replicas of the task's own job (service) are
candidates, and rendezvous (HRW) hashing of (task name, node name) picks among them:

    key(n) = (COUNT_TOP - same_job(n)) << HASH_BITS  |  hrw(task, n) >> (64 - HASH_BITS)

the engine takes the feasible node with the highest key. So while every replica fits, the replica counts
of a service over its eligible nodes differ by at most 1 (max skew 1: 6 replicas on 3 empty nodes land
2/2/2, where plain hashing gave 0/3/3). Placed replicas are never moved for it: a node joining takes
only new or displaced replicas (it has the fewest, so it is preferred), and a node leaving displaces only
its own. Ties of the hash (one in 2**47 per pair) go to the first node name. Counts are capped at
COUNT_TOP - 1 replicas of one service on one node.
"""

from __future__ import annotations

import numpy as np

from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer
from loadmaster.placement.plugins.scorers.rendezvous import rendezvous_hash
from loadmaster.placement.plugins.scorers.replica_counts import active_per_node, same_job_tasks

HASH_BITS = 47  # the hash's high bits: ties between two nodes 1 in 2**47
COUNT_BITS = 15  # 47 + 15 = 62 bits: the key stays a positive int64
COUNT_TOP = 1 << COUNT_BITS


class ServiceSpread(Scorer):
    name, normalized, lexicographic = "service_spread", False, True

    def applies(self, ctx: TaskContext) -> bool:
        return True

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        snapshot = ctx.snapshot
        same_job = active_per_node(snapshot, same_job_tasks(snapshot, int(snapshot.task_job[ctx.t])))[cols]
        fewest_first = COUNT_TOP - 1 - np.minimum(same_job, COUNT_TOP - 1)
        hashed = rendezvous_hash(ctx, cols) >> np.uint64(64 - HASH_BITS)
        return (fewest_first << HASH_BITS) | hashed.astype(np.int64)
