"""A cheap necessary condition for a victim scenario to place its tasks, checked before playing it.

Playing S(V; t1..ti) costs a full node choice per task. But the ``resource_fit`` filter (which every
profile applies to a task requesting any non-GPU resource) already decides many scenarios: t can only
be placed on a node n with ``free_V[r, n] >= request[r, t]`` for every requested non-GPU resource r,
where ``free_V = node_free + (requests of V's tasks on n)`` (evicting a task makes its request free
for a Pipelined placement). Placing t1..t(k-1) first only lowers free room, and the other filters
only remove nodes, so

    some task t of t1..ti fits no node of free_V  =>  S(V; t1..ti) places nothing (not valid).

``may_place`` is False only then: skipping such a play never changes a result (the property test
compares the search with a plain exhaustive one). Nodes V does not touch keep ``node_free``, so the
check is "fits some node now" (once per task per search) or "fits one of V's nodes" (a few columns).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from loadmaster.actions.victims import Unit, tasks_of
from loadmaster.session import IntArray, Session


class FitBound:
    def __init__(self, session: Session, tasks: Sequence[int], input_node: IntArray) -> None:
        """Taken at the search's starting state (later scenarios are played and rolled back on it).

        ``input_node``: each task's node in the input, which is where every unit task still is (a
        unit's tasks are Running; a task that moved no longer belongs to any unit)."""
        snapshot = session.snapshot
        self.request = snapshot.task_request
        self.input_node = input_node
        self.free = snapshot.state.node_free.copy()
        gpu_row = snapshot.gpu_row
        # task -> its non-GPU requested rows, only for tasks that fit no node as things stand
        self.blocked: dict[int, IntArray] = {}
        verdicts: dict[bytes, bool] = {}  # identical requests share the vector check
        for t in tasks:
            request = self.request[:, t]
            rows = np.flatnonzero(request > 0)
            rows = rows[rows != gpu_row]
            if not rows.size:
                continue
            key = request.tobytes()
            if key not in verdicts:
                verdicts[key] = bool((self.free[rows] >= request[rows, None]).all(axis=0).any())
            if not verdicts[key]:
                self.blocked[t] = rows

    def may_place(self, units: Sequence[Unit], prefix: Sequence[int]) -> bool:
        """False only if some task of ``prefix`` fits no node even with ``units`` evicted."""
        blocked = [t for t in prefix if t in self.blocked]
        if not blocked:
            return True
        victims = tasks_of(units)
        if not victims:
            return False
        # room on the nodes V touches (few): their free room plus what V's tasks there release
        nodes = self.input_node[victims].tolist()
        columns: dict[int, int] = {}
        for n in nodes:
            columns.setdefault(n, len(columns))
        room = self.free[:, list(columns)]  # a copy (fancy indexing): the sums below stay local
        released = self.request[:, victims]
        if len(columns) == 1:
            room += released.sum(axis=1, keepdims=True)
        else:  # room.T is a view: the task-by-task sums land in room
            np.add.at(room.T, np.array([columns[n] for n in nodes], dtype=np.int64), released.T)
        for t in blocked:
            rows = self.blocked[t]
            if not (room[rows] >= self.request[rows, t, None]).all(axis=0).any():
                return False
        return True
