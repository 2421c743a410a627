"""Per-node counts of a job's active tasks, the input of the service placement orders.

A task is active on a node while it is Running or Pipelined there, including tasks placed earlier in the
same cycle (the Statement updates the working state); Releasing tasks do not count. A job's task
indices never change within a snapshot, so they are found once per job name and kept in the snapshot's
memo: a count then costs O(tasks of the job), not O(tasks of the cluster).
"""

from __future__ import annotations

import numpy as np

from loadmaster.core.columns.snapshot import BOUND, PIPELINED, ClusterSnapshot
from loadmaster.placement.extension_points import BoolArray, IntArray

TaskSelection = IntArray | slice


def same_job_tasks(snapshot: ClusterSnapshot, job: int) -> TaskSelection:
    """The tasks of every job named as job ``job``: the control plane makes a service one job of its
    placed replicas plus one per waiting replica, all with the service's name
    (``runtime/scheduling/model/service_jobs.py``). Once per snapshot and name; a slice when they are
    contiguous (the usual case: a service's jobs come one after another), so that reading their
    columns makes views, not copies (a 10,000-replica service: the gathers were most of a count)."""
    name = snapshot.jobs[job].name
    key = ("same_job_tasks", name)
    indices = snapshot.memo.get(key)
    if indices is None:
        by_name = snapshot.memo.get(("jobs_by_name",))
        if by_name is None:
            grouped: dict[str, list[int]] = {}
            for j, each in enumerate(snapshot.jobs):
                grouped.setdefault(each.name, []).append(j)
            by_name = snapshot.memo[("jobs_by_name",)] = grouped
        assert isinstance(by_name, dict)
        found = np.flatnonzero(np.isin(snapshot.task_job, by_name[name])).astype(np.int64)
        contiguous = found.size and int(found[-1]) - int(found[0]) + 1 == found.size
        indices = slice(int(found[0]), int(found[-1]) + 1) if contiguous else found
        snapshot.memo[key] = indices
    assert isinstance(indices, np.ndarray | slice)
    return indices


def active_per_node(snapshot: ClusterSnapshot, tasks: TaskSelection | None = None) -> IntArray:
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
