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
A task that opted in to overcommit sees more room than ``node_free``: it is never counted blocked
(the bound only prunes, so leaving a task out keeps it exact).

When every victim must land again (consolidate: moves only), a second bound holds for any V:
evicting and re-placing victims moves room around the cluster without adding any, and (with no
overcommit, and no node already past its allocatable) every node keeps ``free >= 0``, since a
placement needs the room and a node only gains by an eviction. So for each non-GPU resource r

    sum_n free_after[r, n] = sum_n node_free[r, n] - request_r(t1..ti) >= 0

and ``fits_total_room`` False means no victim set can be valid for t1..ti: the search's per-node
offers are then not tried (each would play scenarios). GPU rows are left out: a ``gpus: all`` victim
holds whatever its node has, so a move can change how many GPUs it holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from loadmaster.actions.victims.units import Unit, tasks_of
from loadmaster.core.columns.input_sums import sum_by_group
from loadmaster.session import IntArray, Session

Needs = list[tuple[int, int]]  # (resource row, amount) for each non-GPU resource a task requests


class TaskNeeds:
    """Each request's non-GPU needs, worked out once per action (identical requests share them)."""

    def __init__(self, session: Session) -> None:
        self.request = session.snapshot.task_request
        self.gpu_row = session.snapshot.gpu_row
        self._memo: dict[bytes, tuple[IntArray, Needs]] = {}

    def of(self, t: int) -> tuple[IntArray, Needs, bytes]:
        """(rows, needs, key): tasks with identical requests have equal keys."""
        request = self.request[:, t]
        key = request.tobytes()
        found = self._memo.get(key)
        if found is None:
            rows = np.flatnonzero(request > 0)
            rows = rows[rows != self.gpu_row]
            found = self._memo[key] = (rows, list(zip(rows.tolist(), request[rows].tolist(), strict=True)))
        return found[0], found[1], key


class FitBound:
    FEW_VICTIMS = 16  # up to this many victim tasks, Python ints beat numpy's per-call cost

    def __init__(
        self, session: Session, tasks: Sequence[int], input_node: IntArray, needs: TaskNeeds
    ) -> None:
        """Taken at the search's starting state (later scenarios are played and rolled back on it).

        ``input_node``: each task's node in the input, which is where every unit task still is (a
        unit's tasks are Running; a task that moved no longer belongs to any unit)."""
        snapshot = session.snapshot
        self.request = snapshot.task_request
        self.input_node = input_node
        self.free = snapshot.state.node_free.copy()
        # task -> its needs, only for tasks that fit no node now; plain ints: a scenario touches few
        # nodes, where Python beats numpy's per-call cost
        self.blocked: dict[int, Needs] = {}
        verdicts: dict[bytes, bool] = {}  # identical requests share the vector check
        for t in tasks:
            rows, task_needs, key = needs.of(t)
            if not task_needs or snapshot.tasks[t].overcommit:
                continue
            if key not in verdicts:
                verdicts[key] = bool((self.free[rows] >= self.request[rows, t, None]).all(axis=0).any())
            if not verdicts[key]:
                self.blocked[t] = task_needs
        self.total_free = total_free_room(session)

    def may_place(
        self,
        units: Sequence[Unit],
        prefix: Sequence[int],
        victims_of: Callable[[Sequence[Unit]], list[int]] = tasks_of,
    ) -> bool:
        """False only if some task of ``prefix`` fits no node even with ``units`` evicted (``victims_of``:
        their tasks, as ``tasks_of`` gives them; a search passes its memo)."""
        blocked = [self.blocked[t] for t in prefix if t in self.blocked]
        if not blocked:
            return True
        victims = victims_of(units)
        if not victims:
            return False
        if len(victims) > self.FEW_VICTIMS:
            return self._may_place_many(victims, blocked)
        # room on the nodes V touches (few): their free room plus what V's tasks there release
        nodes = self.input_node[victims].tolist()
        room: dict[int, list[int]] = {n: self.free[:, n].tolist() for n in set(nodes)}
        for n, released in zip(nodes, self.request[:, victims].T.tolist(), strict=True):
            column = room[n]
            for r, amount in enumerate(released):
                column[r] += amount
        return all(
            any(all(column[r] >= amount for r, amount in needs) for column in room.values())
            for needs in blocked
        )

    def _may_place_many(self, victims: list[int], blocked: list[Needs]) -> bool:
        """``may_place`` for a large V (a whole-job unit: hundreds of tasks on many nodes), as vectors:
        the same sums, ``room[:, n] = free[:, n] + sum of request[:, v] over V's tasks v on n``."""
        victim_array = np.asarray(victims, dtype=np.int64)
        nodes, inverse = np.unique(self.input_node[victim_array], return_inverse=True)
        room = self.free[:, nodes] + sum_by_group(self.request[:, victim_array], inverse, nodes.size).T
        for needs in blocked:
            rows = [r for r, _ in needs]
            amounts = np.array([amount for _, amount in needs], dtype=np.int64)
            if not bool((room[rows] >= amounts[:, None]).all(axis=0).any()):
                return False
        return True

    def fits_total_room(self, prefix: Sequence[int]) -> bool:
        """False only if ``prefix`` requests more of a non-GPU resource than the whole cluster has free,
        so no scenario whose victims all land again can place it (module docstring)."""
        return fits_total_room(self.request, self.total_free, prefix)


def total_free_room(session: Session) -> IntArray | None:
    """[R] the cluster's free room summed over nodes, GPU rows unbounded; None where the total-room
    bound does not hold (overcommit declared somewhere, or a node already past its allocatable)."""
    snapshot = session.snapshot
    free = snapshot.state.node_free
    if snapshot.overcommit_room.any() or not bool((free >= 0).all()):
        return None
    total: IntArray = free.sum(axis=1)
    total[snapshot.gpu_row] = np.iinfo(np.int64).max
    return total


def fits_total_room(request: IntArray, total_free: IntArray | None, tasks: Sequence[int]) -> bool:
    """False only if ``tasks`` request more of a non-GPU resource than ``total_free`` (None: no bound)."""
    if total_free is None or not tasks:
        return True
    return bool((request[:, list(tasks)].sum(axis=1) <= total_free).all())


def first_fits_nowhere(session: Session, tasks: Sequence[int]) -> bool:
    """Whether the first of ``tasks`` fits no node's free room now, on some non-GPU resource it requests
    (``node_free``, where releasing room counts as free), with the total-room bound's conditions: no
    overcommit anywhere and no node past its allocatable (``total_free_room``). Then no placement
    sequence that ends with every victim back in place can have placed it (module docstring)."""
    if not tasks or total_free_room(session) is None:
        return False
    snapshot = session.snapshot
    t = tasks[0]
    request = snapshot.task_request[:, t]
    rows = np.flatnonzero(request > 0)
    rows = rows[rows != snapshot.gpu_row]
    if not rows.size or snapshot.tasks[t].overcommit:
        return False
    free = snapshot.state.node_free
    return not bool((free[rows] >= request[rows, None]).all(axis=0).any())
