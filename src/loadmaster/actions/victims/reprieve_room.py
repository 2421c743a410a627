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
from itertools import groupby

import numpy as np

from loadmaster.actions.victims.index import VictimIndex
from loadmaster.actions.victims.units import Unit
from loadmaster.queues.hierarchy import BoolArray
from loadmaster.session import IntArray, Session

Release = Callable[[Unit], tuple[IntArray, IntArray]]  # unit -> (its nodes, [R, nodes] its requests)
RESOURCE_FIT = "resource_fit"


class ReprieveRoom:
    def __init__(self, session: Session, t: int, release: Release, input_node: IntArray,
                 request_rows: IntArray) -> None:  # fmt: skip
        """Taken at the search's starting state (every play starts from it). ``release``: a unit's
        requests summed by node (``VictimIndex.release``); ``input_node``: where each unit task is;
        ``request_rows``: every task's request on t's rows (``VictimIndex.request_rows``)."""
        self.request_rows = request_rows
        plan = session.engine.plan_of(t)
        snapshot = session.snapshot
        self.rows = plan.ctx.fit_rows.tolist()
        self.request = snapshot.task_request[self.rows, t][:, None]
        self.static: BoolArray = plan.static
        self.free_rows = snapshot.state.node_free[self.rows]
        self.release, self.input_node = release, input_node
        # per search: a unit's release on ``rows``
        self._unit_rows: dict[tuple[int, int], tuple[IntArray, IntArray]] = {}

    def _released(self, unit: Unit) -> tuple[IntArray, IntArray]:
        key = (unit.job, unit.sub)
        found = self._unit_rows.get(key)
        if found is None:
            nodes, sums = self.release(unit)
            found = self._unit_rows[key] = (nodes, sums[self.rows])
        return found

    @classmethod
    def of(cls, session: Session, t: int, index: VictimIndex) -> ReprieveRoom | None:
        """The room check for t, or None when the formula does not decide its placement: a filter
        that reads more than free room (host ports, volumes, topology spread), GPUs or overcommit."""
        plan = session.engine.plan_of(t)
        ctx = plan.ctx
        if ctx.gpu or ctx.gpu_all or ctx.overcommit or any(f.name != RESOURCE_FIT for f in plan.dynamic):
            return None
        rows = ctx.fit_rows.tolist()
        return cls(session, t, index.release, index.input_node, index.request_rows(rows))

    def _fits(self, columns: IntArray) -> BoolArray:
        """[len(columns)] whether t fits each of these columns of ``room`` (``rows`` only)."""
        return np.asarray((columns >= self.request).all(axis=0))

    def reprieve(self, chosen: Sequence[Unit], on_node: Sequence[Unit], n: int) -> list[Unit] | None:
        """What ``VictimSearch._offer`` keeps of ``on_node`` (the units with a task on node n) with
        ``chosen`` evicted too (the reprieve, most important first), or None when t cannot be placed
        even with all of them evicted.

        Most important first means job by job: a job's whole unit, then its task units (each one task,
        on n). While the whole unit is in V its task units change nothing (their tasks are evicted
        with it). The whole unit's step changes its nodes' columns, as vectors, less what the job's
        task units in V hold; a task unit's step changes column n only, kept as Python ints."""
        every = [*chosen, *on_node]
        whole = {u.job for u in every if u.sub == 0}  # jobs evicted whole
        rows = self.free_rows.copy()
        for unit in every:
            if unit.sub == 0:
                nodes, sums = self._released(unit)
                rows[:, nodes] += sums
            elif unit.job not in whole:  # (a task unit of ``chosen``) otherwise freed with its job
                v = unit.tasks[0]
                rows[:, self.input_node[v]] += self.request_rows[:, v]
        fit = self.static & self._fits(rows)
        count = int(np.count_nonzero(fit))
        if count == 0:
            return None
        need: list[int] = self.request[:, 0].tolist()
        static_n = bool(self.static[n])
        col: list[int] = rows[:, n].tolist()  # column n, the truth while task units step
        fit_n = bool(fit[n])
        dropped: set[int] = set()  # id() of the units dropped
        # ``on_node`` comes in (job, sub) order (``VictimIndex.on``): a stable sort by priority alone is
        # the importance order (-priority, job, sub), without building its key per unit
        for job, group in groupby(sorted(on_node, key=_minus_priority), key=lambda u: u.job):
            units = list(group)
            tasks = [u.tasks[0] for u in units if u.sub != 0]  # its task units, all on n
            on_n = self.request_rows[:, tasks].sum(axis=1) if tasks else None
            if units[0].sub == 0:  # the whole unit steps first
                rows[:, n], fit[n] = col, fit_n
                nodes, delta = self._released(units[0])
                mine = [u.tasks[0] for u in chosen if u.job == job]
                if on_n is not None or mine:  # less the job's task units in V: on n, and chosen's
                    delta = delta.copy()
                    if on_n is not None:
                        delta[:, np.searchsorted(nodes, n)] -= on_n
                    for v in mine:
                        delta[:, np.searchsorted(nodes, self.input_node[v])] -= self.request_rows[:, v]
                after_columns = rows[:, nodes] - delta
                fit_after = self.static[nodes] & self._fits(after_columns)
                changed = count - int(np.count_nonzero(fit[nodes])) + int(np.count_nonzero(fit_after))
                if changed > 0:
                    rows[:, nodes], fit[nodes], count = after_columns, fit_after, changed
                    col, fit_n = rows[:, n].tolist(), bool(fit[n])
                    whole.discard(job)
                    dropped.add(id(units[0]))
            if job in whole or on_n is None:  # task units evicted with their whole job: no change
                dropped.update(id(u) for u in units[1:] if u.sub != 0)
                continue
            if count > fit_n:  # another node fits t whatever n loses: every task unit goes
                col = _minus(col, on_n.tolist())
                fits_after = static_n and all(a >= q for a, q in zip(col, need, strict=True))
                count, fit_n = count - fit_n + fits_after, fits_after
                dropped.update(id(u) for u in units if u.sub != 0)
                continue
            # n is the only node t fits: one by one, while it still fits. As vectors: a run of drops
            # while the running sum fits, then one by one from the first that does not (a later
            # smaller task may still go; none can when the rest ask the same as that one).
            task_units = [u for u in units if u.sub != 0]
            requests = self.request_rows[:, tasks]
            left = np.asarray(col)[:, None] - np.cumsum(requests, axis=1)
            fits_run = (left >= self.request).all(axis=0) if static_n else np.zeros(len(tasks), np.bool_)
            run = len(tasks) if fits_run.all() else int(np.argmin(fits_run))
            if run:
                col = left[:, run - 1].tolist()
                dropped.update(id(u) for u in task_units[:run])
            rest = requests[:, run:]
            if rest.size and not bool((rest == rest[:, :1]).all()):
                for u, asked in zip(task_units[run + 1 :], rest[:, 1:].T.tolist(), strict=True):
                    after = _minus(col, asked)
                    if all(a >= q for a, q in zip(after, need, strict=True)):
                        col = after
                        dropped.add(id(u))
        return [u for u in on_node if id(u) not in dropped]


def _minus_priority(unit: Unit) -> int:
    return -unit.priority


def _minus(a: list[int], b: list[int]) -> list[int]:
    return [x - y for x, y in zip(a, b, strict=True)]
