"""Per-node counts of a job's active tasks, the input of the service placement orders.

A task is active on a node while it is Running or Pipelined there, including tasks placed earlier in the
same cycle (the Statement updates the working state); Releasing tasks do not count. A job's task
indices never change within a snapshot, so they are found once per job and kept in the snapshot's memo:
a count then costs O(tasks of the job), not O(tasks of the cluster).
"""

from __future__ import annotations

import numpy as np

from loadmaster.core.snapshot import BOUND, PIPELINED, ClusterSnapshot
from loadmaster.placement.extension_points import BoolArray, IntArray


def job_task_indices(snapshot: ClusterSnapshot, job: int) -> IntArray:
    """The indices of job ``job``'s tasks (once per snapshot and job)."""
    key = ("job_tasks", job)
    indices = snapshot.memo.get(key)
    if indices is None:
        indices = np.flatnonzero(snapshot.task_job == job).astype(np.int64)
        snapshot.memo[key] = indices
    assert isinstance(indices, np.ndarray)
    return indices


def active_per_node(snapshot: ClusterSnapshot, tasks: IntArray | None = None) -> IntArray:
    """``count[n]`` = active tasks among ``tasks`` (all tasks when None) on node n."""
    state = snapshot.state
    phase = state.task_phase if tasks is None else state.task_phase[tasks]
    node = state.task_node if tasks is None else state.task_node[tasks]
    active = (phase == BOUND) | (phase == PIPELINED)
    return np.bincount(node[active], minlength=snapshot.n_nodes).astype(np.int64)


def delayed_tasks(snapshot: ClusterSnapshot) -> BoolArray:
    """Which tasks are in delayed shutdown (once per snapshot)."""
    delayed = snapshot.memo.get(("delayed_shutdown",))
    if delayed is None:
        delayed = np.array([task.delayed_shutdown for task in snapshot.tasks], dtype=np.bool_)
        snapshot.memo[("delayed_shutdown",)] = delayed
    assert isinstance(delayed, np.ndarray)
    return delayed


def delayed_indices(snapshot: ClusterSnapshot, delayed: BoolArray) -> IntArray:
    """The indices of the tasks in delayed shutdown (once per snapshot)."""
    indices = snapshot.memo.get(("delayed_indices",))
    if indices is None:
        indices = np.flatnonzero(delayed).astype(np.int64)
        snapshot.memo[("delayed_indices",)] = indices
    assert isinstance(indices, np.ndarray)
    return indices
