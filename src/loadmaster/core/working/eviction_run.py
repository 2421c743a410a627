"""A run of evictions as one log entry of the Statement (``Statement.evict_many``).

A victim search evicts a whole-job unit of hundreds of tasks to try one scenario, then rolls it back:
task by task that is two primitives per task each way (a record read, a history push, a listener
call). Tasks that hold nothing the arrays cannot express (no GPU devices, volume charges or host
ports: no stored record) are evicted as one ``EvictionRun``: for every node n and resource r,

    delta[r, n] = sum of request[r, t] over the run's tasks t on n,

node_used and node_used_nz lose it, node_releasing and node_free gain it (node_idle is unchanged: the
request stays on the node), node_tasks loses the count; each task becomes Releasing on its node. This is
exactly ``evict`` of each task in turn (integer sums do not depend on order), and its undo restores the
task arrays saved before, so it is exact (a property test compares both).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from loadmaster.core.columns.input_sums import sum_by_group
from loadmaster.core.columns.snapshot import (
    BOUND,
    NO_NODE,
    RELEASING,
    ClusterSnapshot,
    IntArray,
    WorkingState,
)


@dataclass(frozen=True, slots=True)
class EvictionRun:
    tasks: IntArray  # [k] each Running in the input, bound where the input put it, with no record
    nodes: IntArray  # [k] the node each is evicted from
    action: str
    reason: str
    used_nodes: IntArray  # the distinct nodes the tasks are on
    delta: IntArray  # [R, len(used_nodes)] the requests leaving "used" on each
    delta_nz: IntArray  # the same with the non-zero score defaults
    counts: IntArray  # [len(used_nodes)] tasks evicted on each
    previous_release_node: npt.NDArray[np.int32]  # [k] (a task moved back by allocate names its old node)
    like_runs: list[tuple[int, int]]  # what listeners are told, both ways (``like_runs``)

    @classmethod
    def of(cls, snapshot: ClusterSnapshot, tasks: IntArray, action: str, reason: str) -> EvictionRun:
        state = snapshot.state
        nodes = state.task_node[tasks].astype(np.int64)
        used_nodes, inverse, counts = np.unique(nodes, return_inverse=True, return_counts=True)
        size = used_nodes.size
        delta = sum_by_group(snapshot.task_request[:, tasks], inverse, size).T
        delta_nz = sum_by_group(snapshot.task_request_nz[:, tasks], inverse, size).T
        previous = state.task_release_node[tasks].copy()
        runs = like_runs(snapshot, tasks)
        return cls(tasks, nodes, action, reason, used_nodes, delta, delta_nz, counts, previous, runs)

    def changed_nodes(self) -> IntArray:
        """Every node whose working state the run changes: the tasks' nodes and the old nodes it forgets."""
        forgotten = self.previous_release_node[self.previous_release_node != NO_NODE]
        return np.union1d(self.used_nodes, forgotten.astype(np.int64))

    def apply(self, state: WorkingState, undo: bool) -> None:
        sign = 1 if undo else -1  # as Statement._shift: -1 moves used -> releasing
        nodes = self.used_nodes
        state.node_used[:, nodes] += sign * self.delta
        state.node_free[:, nodes] -= sign * self.delta
        state.node_used_nz[:, nodes] += sign * self.delta_nz
        state.node_releasing[:, nodes] -= sign * self.delta
        state.node_tasks[nodes] += sign * self.counts
        state.releasing_count -= sign * int(self.tasks.size)
        state.task_phase[self.tasks] = BOUND if undo else RELEASING
        state.task_release_node[self.tasks] = self.previous_release_node if undo else NO_NODE


def plain_evictions(snapshot: ClusterSnapshot, tasks: IntArray) -> bool:
    """Whether ``tasks`` (distinct) can be evicted as one run: every one bound where the input runs it,
    with no stored record (GPU devices, volume charges, a moved task's old devices) and no host ports or
    ``gpus: all`` (``task_has_extras``)."""
    state = snapshot.state
    if not bool((state.task_phase[tasks] == BOUND).all()) or snapshot.task_has_extras[tasks].any():
        return False
    if not bool(snapshot.input_running_mask[tasks].all()):
        return False
    records = state.records
    return not records or not any(t in records for t in tasks.tolist())


def like_runs(snapshot: ClusterSnapshot, tasks: IntArray) -> list[tuple[int, int]]:
    """(first task, count) for each run of consecutive ``tasks`` of one job and one request: a Statement
    listener is told each run once (``listener(first, +-count)``)."""
    jobs, requests = snapshot.task_job[tasks], snapshot.task_request[:, tasks]
    same = (jobs[1:] == jobs[:-1]) & (requests[:, 1:] == requests[:, :-1]).all(axis=0)
    starts = np.flatnonzero(np.concatenate(([True], ~same)))
    sizes = np.diff(np.append(starts, tasks.size))
    return list(zip(tasks[starts].tolist(), sizes.tolist(), strict=True))
