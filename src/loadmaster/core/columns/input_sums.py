"""Sums over a cluster's tasks that every session starts from, carried from one cycle to the next.

A session opens with the node usage of the tasks the input has on nodes (the working state's start)
and with each queue's demand and allocated usage (fair share, ordering, limits). Summing 50,000 tasks
per cycle is wasted work when the control plane's next cluster differs by a few jobs, so the sums
travel with the task columns (``task_columns.py``). For a shared prefix of ``kt`` tasks:

    sums(current) = sums(previous) - sums(previous tasks kt..) + sums(current tasks kt..)

which is exact: everything is int64. Queue rows are indexed by queue code (``queue_names``, sorted), so
carried rows are moved to the current codes (``remap``) after the subtraction, when every row of a
queue no job uses any more is exactly zero.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
NO_NODE = -1
SMALL = 64  # below this many columns np.add.at beats sorting (a cycle's few new tasks)


def sum_by_group(values: IntArray, groups: npt.NDArray[np.integer], size: int) -> IntArray:
    """[size, R]: row g sums the columns of ``values`` [R, T] whose ``groups`` entry is g (exact int64;
    np.add.at does the same an element at a time, 10x slower)."""
    totals = np.zeros((size, values.shape[0]), dtype=np.int64)
    if len(groups) <= SMALL:
        np.add.at(totals, groups, values.T)
        return totals
    order = np.argsort(groups, kind="stable")
    ordered = groups[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    totals[ordered[starts]] = np.add.reduceat(values[:, order], starts, axis=1).T
    return totals


@dataclass(frozen=True, slots=True)
class InputSums:
    """Arrays are read-only (a session copies what it changes)."""

    node_used: IntArray  # [R, N] requests of the tasks the input has Running on each node
    node_used_nz: IntArray  # [R, N] the same with the non-zero score defaults
    node_releasing: IntArray  # [R, N] requests of the tasks the input has Releasing
    node_tasks: IntArray  # [N] tasks the input has Running on each node
    releasing_count: int  # tasks the input has Releasing
    queue_request: IntArray  # [Q, R] every task's request, by its job's queue code (demand)
    queue_running: IntArray  # [2, Q, R] Running tasks' requests, by (job preemptible, queue code)

    def carried(self, dropped: InputSums, remap: npt.NDArray[np.int32], queues: int) -> InputSums:
        """These sums without ``dropped``'s, queue rows moved to new codes (``remap[old]``, -1: gone)."""
        kept = np.flatnonzero(remap >= 0)
        request = np.zeros((queues, self.queue_request.shape[1]), dtype=np.int64)
        running = np.zeros((2, queues, self.queue_request.shape[1]), dtype=np.int64)
        request[remap[kept]] = (self.queue_request - dropped.queue_request)[kept]
        running[:, remap[kept]] = (self.queue_running - dropped.queue_running)[:, kept]
        return InputSums(
            self.node_used - dropped.node_used,
            self.node_used_nz - dropped.node_used_nz,
            self.node_releasing - dropped.node_releasing,
            self.node_tasks - dropped.node_tasks,
            self.releasing_count - dropped.releasing_count,
            request,
            running,
        )

    def plus(self, other: InputSums) -> InputSums:
        return InputSums(
            self.node_used + other.node_used,
            self.node_used_nz + other.node_used_nz,
            self.node_releasing + other.node_releasing,
            self.node_tasks + other.node_tasks,
            self.releasing_count + other.releasing_count,
            self.queue_request + other.queue_request,
            self.queue_running + other.queue_running,
        )

    def frozen(self) -> InputSums:
        for array in (self.node_used, self.node_used_nz, self.node_releasing, self.node_tasks,
                      self.queue_request, self.queue_running):  # fmt: skip
            array.flags.writeable = False
        return self


def input_sums(
    request: IntArray,
    request_nz: IntArray,
    node: npt.NDArray[np.int32],
    releasing: npt.NDArray[np.bool_],
    queue: npt.NDArray[np.int32],
    preemptible: npt.NDArray[np.bool_],
    nodes: int,
    queues: int,
) -> InputSums:
    """The sums over some tasks, given their columns: ``node`` (NO_NODE when the input does not place
    the task), ``releasing``, and their job's ``queue`` code and ``preemptible`` flag."""
    rows = request.shape[0]
    placed = node != NO_NODE
    if placed.any():
        running = placed & ~releasing
        leaving = placed & releasing
        on = node[running]
        both = sum_by_group(np.concatenate((request[:, running], request_nz[:, running])), on, nodes).T
        used, used_nz = np.ascontiguousarray(both[:rows]), np.ascontiguousarray(both[rows:])
        releasing_sum = np.ascontiguousarray(sum_by_group(request[:, leaving], node[leaving], nodes).T)
        tasks, leaving_count = np.bincount(on, minlength=nodes).astype(np.int64), int(leaving.sum())
        chosen = [running & (preemptible == flag) for flag in (False, True)]
        queue_running = np.stack([sum_by_group(request[:, c], queue[c], queues) for c in chosen])
    else:  # the usual new tasks of a cycle: all Pending
        used, used_nz, releasing_sum = (np.zeros((rows, nodes), dtype=np.int64) for _ in range(3))
        tasks, leaving_count = np.zeros(nodes, dtype=np.int64), 0
        queue_running = np.zeros((2, queues, rows), dtype=np.int64)
    return InputSums(
        used,
        used_nz,
        releasing_sum,
        tasks,
        leaving_count,
        sum_by_group(request, queue, queues),
        queue_running,
    )
