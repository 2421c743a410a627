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

    def fits(self, columns: IntArray) -> BoolArray:
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
        room = _Room(self, rows, n)
        if room.count == 0:
            return None
        dropped: set[int] = set()  # id() of the units dropped
        # ``on_node`` comes in (job, sub) order (``VictimIndex.on``): a stable sort by priority alone is
        # the importance order (-priority, job, sub), without building its key per unit
        for job, group in groupby(sorted(on_node, key=_minus_priority), key=lambda u: u.job):
            units = list(group)
            tasks = [u.tasks[0] for u in units if u.sub != 0]  # its task units, all on n
            on_n = self.request_rows[:, tasks].sum(axis=1) if tasks else None
            if units[0].sub == 0:  # the whole unit steps first
                nodes, delta = self._released(units[0])
                mine = [u.tasks[0] for u in chosen if u.job == job]
                if on_n is not None or mine:  # less the job's task units in V: on n, and chosen's
                    delta = delta.copy()
                    if on_n is not None:
                        delta[:, np.searchsorted(nodes, n)] -= on_n
                    for v in mine:
                        delta[:, np.searchsorted(nodes, self.input_node[v])] -= self.request_rows[:, v]
                if room.drop_whole(nodes, delta):
                    whole.discard(job)
                    dropped.add(id(units[0]))
            if job in whole or on_n is None:  # task units evicted with their whole job: no change
                dropped.update(id(u) for u in units[1:] if u.sub != 0)
                continue
            if room.elsewhere():  # another node fits t whatever n loses: every task unit goes
                room.take_on_n(on_n.tolist())
                dropped.update(id(u) for u in units if u.sub != 0)
                continue
            # n is the only node t fits: one by one, while it still fits. As vectors: a run of drops
            # while the running sum fits, then one by one from the first that does not (a later
            # smaller task may still go; none can when the rest ask the same as that one).
            task_units = [u for u in units if u.sub != 0]
            requests = self.request_rows[:, tasks]
            left = np.asarray(room.col)[:, None] - np.cumsum(requests, axis=1)
            fits_run = (left >= self.request).all(axis=0) if room.static_n else np.zeros(len(tasks), np.bool_)
            run = len(tasks) if fits_run.all() else int(np.argmin(fits_run))
            if run:
                room.col = left[:, run - 1].tolist()
                dropped.update(id(u) for u in task_units[:run])
            rest = requests[:, run:]
            if rest.size and not bool((rest == rest[:, :1]).all()):
                for u, asked in zip(task_units[run + 1 :], rest[:, 1:].T.tolist(), strict=True):
                    after = _minus(room.col, asked)
                    if room.fits_n(after):
                        room.col = after
                        dropped.add(id(u))
        return [u for u in on_node if id(u) not in dropped]


def _minus_priority(unit: Unit) -> int:
    return -unit.priority


def _minus(a: list[int], b: list[int]) -> list[int]:
    return [x - y for x, y in zip(a, b, strict=True)]


class _Room:
    """``room`` on t's rows during one reprieve, and how many nodes t fits there.

    Column n (every unit on the node has a task there) is kept as Python ints, the truth: a task unit's
    step changes it alone. A whole unit's step asks whether t still fits some node once the unit keeps
    its room; usually many nodes fit, so the answer is known before the unit's columns are:

        count_after >= count - |fit on the unit's nodes|    (the unit takes room only on its nodes)

    so while ``count`` less the fitting nodes the unit spans is positive, the unit is dropped with its
    columns left pending, and ``count`` becomes a lower bound (``fit``, an overestimate, serves the next
    bound: it only counts more). The first step that the bound cannot decide takes the pending columns
    and counts again (``settle``), then steps exactly. Same answers as stepping every unit exactly."""

    def __init__(self, reprieve: ReprieveRoom, rows: IntArray, n: int) -> None:
        self._of, self._rows, self._n = reprieve, rows, n
        self._fit = reprieve.static & reprieve.fits(rows)
        self.count = int(np.count_nonzero(self._fit))  # exact, or a lower bound while columns are pending
        self._pending: list[tuple[IntArray, IntArray]] = []  # (nodes, room taken) of units dropped
        self._need: list[int] = reprieve.request[:, 0].tolist()
        self.static_n = bool(reprieve.static[n])
        self.col: list[int] = rows[:, n].tolist()
        self._fit_n = bool(self._fit[n])

    def fits_n(self, col: list[int]) -> bool:
        return self.static_n and all(a >= q for a, q in zip(col, self._need, strict=True))

    def drop_whole(self, nodes: IntArray, delta: IntArray) -> bool:
        """Whether t still fits some node with this whole unit kept Running (then it is dropped from V
        and its room ``delta`` on ``nodes`` is taken back)."""
        n = self._n
        self._fit[n] = self._fit_n
        at_most = int(np.count_nonzero(self._fit[nodes]))  # the fitting nodes the unit can take
        if self.count - at_most > 0:
            self._pending.append((nodes, delta))
            self.col = _minus(self.col, delta[:, np.searchsorted(nodes, n)].tolist())
            self._fit_n = self.fits_n(self.col)
            self.count += self._fit_n - at_most
            return True
        self._settle()
        rows, fit = self._rows, self._fit
        after_columns = rows[:, nodes] - delta
        fit_after = self._of.static[nodes] & self._of.fits(after_columns)
        changed = self.count - int(np.count_nonzero(fit[nodes])) + int(np.count_nonzero(fit_after))
        if changed <= 0:
            return False
        rows[:, nodes], fit[nodes], self.count = after_columns, fit_after, changed
        self.col, self._fit_n = rows[:, n].tolist(), bool(fit[n])
        return True

    def elsewhere(self) -> bool:
        """Whether t fits some node other than n. Exact even while ``count`` is a lower bound: a pending
        drop left ``count - at_most >= 1`` fitting nodes outside the unit's (so not n), and a task
        unit's step keeps ``count - fit_n``, so then ``count > fit_n`` and the truth is too."""
        return self.count > self._fit_n

    def take_on_n(self, request: list[int]) -> None:
        """Drop task units on n holding ``request`` (t fits elsewhere whatever n keeps)."""
        self.col = _minus(self.col, request)
        fits_after = self.fits_n(self.col)
        self.count += fits_after - self._fit_n
        self._fit_n = fits_after

    def _settle(self) -> None:
        """Take the pending units' room and count exactly (column n is already the truth)."""
        if not self._pending:
            self._rows[:, self._n], self._fit[self._n] = self.col, self._fit_n
            return
        rows = self._rows
        for nodes, delta in self._pending:
            rows[:, nodes] -= delta
        self._pending.clear()
        rows[:, self._n] = self.col
        self._fit = self._of.static & self._of.fits(rows)
        self.count = int(np.count_nonzero(self._fit))
