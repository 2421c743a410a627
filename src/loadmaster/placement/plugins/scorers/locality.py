"""Scorer ``locality`` (``lablet``): co-location with the same job.
``L = 100 * (job's tasks Running or Pipelined on the node) // (job's tasks Running or Pipelined anywhere)``,
0 when the job has none placed."""

from __future__ import annotations

import numpy as np

from loadmaster.core.columns.snapshot import BOUND, PIPELINED
from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer


def job_tasks_per_node(ctx: TaskContext) -> IntArray:
    snapshot, state = ctx.snapshot, ctx.snapshot.state
    members = np.array(snapshot.job_tasks[int(snapshot.task_job[ctx.t])], dtype=np.int64)
    phase = state.task_phase[members]
    placed = members[(phase == BOUND) | (phase == PIPELINED)]
    return np.bincount(state.task_node[placed], minlength=snapshot.n_nodes).astype(np.int64)


class Locality(Scorer):
    name, normalized = "locality", True  # the job total changes with every placement

    def applies(self, ctx: TaskContext) -> bool:
        return True

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        per_node = job_tasks_per_node(ctx)
        total = int(per_node.sum())
        if total == 0:
            return np.zeros(ctx.snapshot.n_nodes, dtype=np.int64)[cols]
        return (100 * per_node // total)[cols]
