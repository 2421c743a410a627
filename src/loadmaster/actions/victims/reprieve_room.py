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
        self.free = snapshot.state.node_free.copy()
        self.task_request = snapshot.task_request
        self.release, self.input_node = release, input_node

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

    def reprieve(self, chosen: Sequence[Unit], on_node: Sequence[Unit]) -> list[Unit] | None:
        """What ``VictimSearch._offer`` keeps of ``on_node`` with ``chosen`` evicted too (the reprieve,
        most important first), or None when t cannot be placed even with all of them evicted."""
        every = [*chosen, *on_node]
        whole = {u.job for u in every if u.sub == 0}  # jobs evicted whole
        extras: dict[int, set[int]] = {}  # job -> its task units' tasks in V
        room = self.free.copy()
        for unit in every:
            if unit.sub == 0:
                nodes, sums = self.release(unit)
                room[:, nodes] += sums
                continue
            (v,) = unit.tasks
            extras.setdefault(unit.job, set()).add(v)
            if unit.job not in whole:  # otherwise released with its whole job
                room[:, self.input_node[v]] += self.task_request[:, v]
        rows = room[self.rows]
        fit = self.static & self._fits(rows)
        count = int(np.count_nonzero(fit))
        if count == 0:
            return None
        kept = list(on_node)
        for unit in sorted(on_node, key=lambda u: u.importance):
            if unit.sub != 0:
                if unit.job in whole:  # its task is evicted with its whole job: nothing changes
                    kept = [u for u in kept if u is not unit]
                    extras[unit.job].discard(unit.tasks[0])
                    continue
                (v,) = unit.tasks
                nodes = self.input_node[v : v + 1]
                delta = self.task_request[self.rows, v][:, None]
            else:
                nodes, sums = self.release(unit)
                delta = sums[self.rows].copy()
                for v in extras.get(unit.job, ()):  # still evicted as task units: not released
                    delta[:, np.searchsorted(nodes, self.input_node[v])] -= self.task_request[self.rows, v]
            after = rows[:, nodes] - delta
            fit_after = self.static[nodes] & self._fits(after)
            changed = count - int(np.count_nonzero(fit[nodes])) + int(np.count_nonzero(fit_after))
            if changed == 0:
                continue  # t would no longer fit anywhere: the unit is kept
            rows[:, nodes], fit[nodes], count = after, fit_after, changed
            kept = [u for u in kept if u is not unit]
            if unit.sub == 0:
                whole.discard(unit.job)
            else:
                extras[unit.job].discard(unit.tasks[0])
        return kept
