"""The reprieve of one node's offer, for one task, without playing its scenarios.

A node's offer (``search.py``) starts from U = every candidate unit with a task on the node and, most
important first, keeps a unit Running whenever t1..ti can still be placed without evicting it: one
``placeable`` per unit, each a play (evict the victims, place the tasks, roll back). On alibaba-2017 a
node holds ~50 units (whole jobs of hundreds of tasks, and their extra tasks), a search walks up to a
thousand nodes, and these plays were 95% of consolidate's time.

When the prefix is one task t whose only state-dependent filter is ``resource_fit`` (no GPU, no
overcommit), the play's answer is a formula. The engine places t iff some node passes every filter:
the static ones (``plan.static``, which no eviction changes) and ``resource_fit``, which with
evictions counted as free room (a Pipelined placement) reads

    room_V[r, n] = node_free[r, n] + sum of request[r, v] over V's tasks v on n,
    placeable(V; t) = exists n: static[n] and room_V[r, n] >= request[r, t] for every row r t requests

(V's tasks: the union of its units' tasks, each evicted once; a non-GPU row of a task's held request
is its request). The reprieve is then run on ``room`` kept up to date unit by unit: dropping a unit
changes only its nodes' columns, so each step costs its nodes, not a play. Same units, same order, same
answers: the kept units are exactly those the plays keep (property test with the plays forced).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from loadmaster.actions.victims.units import Unit
from loadmaster.queues.hierarchy import BoolArray
from loadmaster.session import IntArray, Session

Release = Callable[[Unit], tuple[IntArray, IntArray]]  # unit -> (its nodes, [R, nodes] its requests)
RESOURCE_FIT = "resource_fit"


class ReprieveRoom:
    def __init__(self, session: Session, t: int, release: Release, input_node: IntArray) -> None:
        """Taken at the search's starting state (every play starts from it). ``release``: a unit's
        requests summed by node (``VictimIndex.release``); ``input_node``: where each unit task is."""
        plan = session.engine.plan_of(t)
        snapshot = session.snapshot
        self.rows = plan.ctx.fit_rows.tolist()
        self.request = snapshot.task_request[self.rows, t][:, None]
        self.static: BoolArray = plan.static
        self.free_rows = snapshot.state.node_free[self.rows]
        self.task_request = snapshot.task_request
        self.release, self.input_node = release, input_node
        # per search: a unit's release on ``rows``, a task's (node, request on ``rows``) as ints
        self._unit_rows: dict[tuple[int, int], tuple[IntArray, IntArray]] = {}
        self._tasks: dict[int, tuple[int, list[int]]] = {}

    def _released(self, unit: Unit) -> tuple[IntArray, IntArray]:
        key = (unit.job, unit.sub)
        found = self._unit_rows.get(key)
        if found is None:
            nodes, sums = self.release(unit)
            found = self._unit_rows[key] = (nodes, sums[self.rows])
        return found

    def _task(self, v: int) -> tuple[int, list[int]]:
        found = self._tasks.get(v)
        if found is None:
            found = self._tasks[v] = (int(self.input_node[v]), self.task_request[self.rows, v].tolist())
        return found

    @classmethod
    def of(cls, session: Session, t: int, release: Release, input_node: IntArray) -> ReprieveRoom | None:
        """The room check for t, or None when the formula does not decide its placement: a filter
        that reads more than free room (host ports, volumes, topology spread), GPUs or overcommit."""
        plan = session.engine.plan_of(t)
        ctx = plan.ctx
        if ctx.gpu or ctx.gpu_all or ctx.overcommit or any(f.name != RESOURCE_FIT for f in plan.dynamic):
            return None
        return cls(session, t, release, input_node)

    def _fits(self, columns: IntArray) -> BoolArray:
        """[len(columns)] whether t fits each of these columns of ``room`` (``rows`` only)."""
        return np.asarray((columns >= self.request).all(axis=0))

    def reprieve(self, chosen: Sequence[Unit], on_node: Sequence[Unit], n: int) -> list[Unit] | None:
        """What ``VictimSearch._offer`` keeps of ``on_node`` (the units with a task on node n) with
        ``chosen`` evicted too (the reprieve, most important first), or None when t cannot be placed
        even with all of them evicted.

        A task unit of ``on_node`` is one task, on n: its step changes column n only, kept as Python
        ints (``col``); a whole-job unit's step changes its nodes' columns, as vectors, less what the
        job's task units in V hold (``extras``, per node: column n is one subtraction). A job's whole
        unit steps before its task units (importance), so ``extras`` is every one of them."""
        every = [*chosen, *on_node]
        whole = {u.job for u in every if u.sub == 0}  # jobs evicted whole
        extras: dict[int, dict[int, list[int]]] = {}  # job -> node -> its task units' requests in V
        rows = self.free_rows.copy()
        loose: dict[int, list[int]] = {}  # node -> what task units of jobs not evicted whole free there
        for unit in every:
            if unit.sub == 0:
                nodes, sums = self._released(unit)
                rows[:, nodes] += sums
                continue
            (v,) = unit.tasks
            node, released = self._task(v)
            held = extras.setdefault(unit.job, {})
            held[node] = _plus(held[node], released) if node in held else released
            if unit.job not in whole:  # otherwise released with its whole job
                loose[node] = _plus(loose[node], released) if node in loose else released
        for node, released in loose.items():
            rows[:, node] += released
        fit = self.static & self._fits(rows)
        count = int(np.count_nonzero(fit))
        if count == 0:
            return None
        need: list[int] = self.request[:, 0].tolist()
        static_n = bool(self.static[n])
        col: list[int] = rows[:, n].tolist()  # column n, the truth while task units step
        fit_n = bool(fit[n])
        dropped: set[int] = set()  # id() of the units dropped
        for unit in sorted(on_node, key=lambda u: u.importance):
            if unit.sub != 0:
                released = self._task(unit.tasks[0])[1]
                if unit.job in whole:  # its task is evicted with its whole job: nothing changes
                    dropped.add(id(unit))
                    continue
                after = [c - r for c, r in zip(col, released, strict=True)]
                fits_after = static_n and all(a >= q for a, q in zip(after, need, strict=True))
                changed = count - fit_n + fits_after
                if changed == 0:
                    continue  # t would no longer fit anywhere: the unit is kept
                col, fit_n, count = after, fits_after, changed
                dropped.add(id(unit))
                continue
            rows[:, n], fit[n] = col, fit_n
            nodes, sums = self._released(unit)
            delta = sums.copy()
            for node, held_there in extras.get(unit.job, {}).items():  # still evicted as task units
                delta[:, np.searchsorted(nodes, node)] -= held_there
            after_columns = rows[:, nodes] - delta
            fit_after = self.static[nodes] & self._fits(after_columns)
            changed = count - int(np.count_nonzero(fit[nodes])) + int(np.count_nonzero(fit_after))
            if changed == 0:
                continue  # t would no longer fit anywhere: the unit is kept
            rows[:, nodes], fit[nodes], count = after_columns, fit_after, changed
            col, fit_n = rows[:, n].tolist(), bool(fit[n])
            whole.discard(unit.job)
            dropped.add(id(unit))
        return [u for u in on_node if id(u) not in dropped]


def _plus(a: list[int], b: list[int]) -> list[int]:
    return [x + y for x, y in zip(a, b, strict=True)]
