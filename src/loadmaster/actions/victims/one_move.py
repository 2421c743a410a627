"""With one move left, a consolidate search whose first task fits nowhere is settled before its walk.

The argument of the spent budget (``fit.py``, ``first_fits_nowhere``) one move further. Take the
preemptor's first task t, which fits no node's free room now on some non-GPU row it requests, with no
overcommit anywhere and no node past its allocatable. A valid scenario with at most one move (the
cycle's budget less the moves made: the control plane's default of one move per cycle, seed conflict 5)
places t on some node m, evicts nothing for good, and moves at most one victim task x; every other
victim ends back where it ran. Every placement is checked for room on the rows its task requests, so
at the end, on each non-GPU row r that t requests,

    0 <= free_end[r, m] = free[r, m] - request_t[r] + [x left m] request_x[r] - [x landed on m] request_x[r]

and t fits nowhere now (``free[r, m] < request_t[r]`` on some such r), so x exists, ran on m, and

    request_x[r] >= request_t[r] - free[r, m]    on every non-GPU row r that t requests.   (cover)

x landed on a node n' != m; there every task but x ends as it was, so on x's rows free_end[r, n'] =
free[r, n'] - request_x[r] >= 0 (the last placement on n' that reads row r was checked):

    x fits free[:, n'] now, on its non-GPU rows, for some n' != m.                      (movable)

With the control plane's move ledger (``config.voluntary_moves``), x is also a task the ledger lets move
(not pinned, not being replaced, out of its cooldown: ``move_refusal.task_move_refusal``), and n' is a node
open to moves (not in ``closed_nodes``): a scenario that moves x otherwise is refused by consolidate's check.

x is a candidate victim (a task Running where the input put it, of a preemptible job other than the
preemptor's), its job offers units now (``units.units_of_job``: a job with a task placed or moved in this
cycle offers none; alibaba-2017's running jobs mostly get more tasks placed by allocate first), m passes t's
static filters, and the ratio holds for the moved set {x}: ``share(x) / share(t1..tk) <= max_eviction_ratio``
with the scenario's own float formula (``DominantShare``). No candidate x with all of that: no offer can be
valid, and the search would walk every node's offer to fail with the plain "no victim set lets it fit";
``walk`` finds no node then. When some candidates can be x, only the nodes that hold a unit with one of them
can make a valid offer: ``walk`` names them, and the search works out no other node's offer (on alibaba-2017,
a median of 18 nodes of ~1,300; a job running on hundreds of nodes brings them all). Each comes with its own
bound, the least disruptive of its units that hold such a candidate (the offer holds one of them), rather
than of all its units: the search stops once no bound can beat the best offer found, and makes the units of
the nodes it reaches only.

Cost, per action: the candidates' columns, and their distinct requests. Per state (a failed search
rolls back, so an action meets few): which candidates are still where the input ran them and could move
now, worked out once for all of them (a [distinct requests, nodes] comparison); on alibaba-2017 a median
of 138 of ~58,000. Per search: (cover), the static filters and the ratio over those few only.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby

import numpy as np

from loadmaster.actions.move_refusal import task_move_refusal
from loadmaster.actions.victims.index import VictimIndex, Walked
from loadmaster.actions.victims.units import solo_key
from loadmaster.core.columns.snapshot import BOUND
from loadmaster.queues.hierarchy import BoolArray
from loadmaster.session import IntArray, StateStamp

FloatArray = np.ndarray


class OneMoveLanding:
    """Per action (consolidate): the candidate victims as columns; those that could be the move, per state."""

    def __init__(self, index: VictimIndex) -> None:
        session = self._session = index.session
        self._index = index
        snapshot = session.snapshot
        request = snapshot.task_request
        self.rows: IntArray = np.array(
            [r for r in range(request.shape[0]) if r != snapshot.gpu_row], np.int64
        )
        # ascending, so a job's candidates are contiguous (its tasks are)
        running = snapshot.input_running_tasks
        self.tasks: IntArray = running[snapshot.job_preemptible[snapshot.task_job[running]]]
        self.jobs: IntArray = snapshot.task_job[self.tasks].astype(np.int64)
        self.nodes: IntArray = snapshot.state.task_node[self.tasks].astype(
            np.int64
        )  # where the input ran them
        self.requests: IntArray = request[self.rows][:, self.tasks]  # [non-GPU rows, candidates]
        self.share = index.share
        # each candidate's share, as the scenario's ratio works it out for a set of one task
        shares = request[self.share.rows][:, self.tasks] / self.share.allocatable[:, None]
        self.shares: FloatArray = shares.max(axis=0, initial=0.0)
        self._distinct, self._which = _distinct_columns(self.requests)
        # the move ledger: the nodes open to moves, and which candidates it lets move (asked lazily: the
        # movers of a state are a few hundred of ~58,000 candidates on alibaba-2017)
        self._ledger = snapshot.config.voluntary_moves
        closed = self._ledger.closed_nodes if self._ledger is not None else frozenset()
        self._open: BoolArray = np.array([name not in closed for name in snapshot.node_names], np.bool_)
        self._may_move: dict[int, bool] = {}
        self._stamp: StateStamp | None = None
        self._in_place: BoolArray = np.zeros(0, dtype=np.bool_)
        self._movers: IntArray = np.zeros(0, dtype=np.int64)
        self._walked: tuple[object, list[Walked]] = (None, [])  # the last ``walk``

    def _now(self) -> tuple[BoolArray, IntArray]:
        """On this state: [candidates] which are still Running where the input ran them (a unit's
        tasks), and the indices of those that also fit the free room of a node other than their own now,
        on their non-GPU rows (movable): a count of the nodes each distinct request fits, less its own."""
        stamp = self._session.state_stamp()
        if stamp != self._stamp:
            state = self._session.snapshot.state
            in_place = (state.task_phase[self.tasks] == BOUND) & (state.task_node[self.tasks] == self.nodes)
            free = state.node_free[self.rows]
            fits = np.asarray(
                (free[:, None, :] >= self._distinct[:, :, None]).all(axis=0) & self._open
            )  # [requests, nodes open to moves]
            own = np.asarray((free[:, self.nodes] >= self.requests).all(axis=0) & self._open[self.nodes])
            elsewhere = fits.sum(axis=1)[self._which] - own
            movers = np.flatnonzero(in_place & (elsewhere > 0))
            if self._ledger is not None:
                movers = movers[[self._ledger_lets_move(int(t)) for t in self.tasks[movers]]]
            self._stamp, self._in_place, self._movers = stamp, in_place, movers
        return self._in_place, self._movers

    def _ledger_lets_move(self, t: int) -> bool:
        """The same for the whole action: the ledger's time and the task's fields do not change."""
        known = self._may_move.get(t)
        if known is None:
            assert self._ledger is not None
            known = self._may_move[t] = not task_move_refusal(self._session.snapshot, t, self._ledger)
        return known

    def walk(self, job: int, tasks: Sequence[int]) -> list[Walked]:
        """(bound, node) for the nodes whose offer may be valid with at most one move, for ``tasks`` (job
        ``job``), whose first task fits no node's free room now (the caller checks: ``first_fits_nowhere``),
        in increasing (bound, node); none at all when no candidate can be the move (module docstring).

        The move x is a task of a unit of the offer, and a node offers only units with a task on it: x's
        task unit (on x's node, when x is one of its job's tasks above ``min_available``) or its job's
        whole unit (on every node the job runs on). So the nodes running a task of a job with such an x
        are the only ones worth an offer, and an offer there holds one of those units: it is no less
        disruptive than the least disruptive of them (``units.solo_key``), the node's bound. That bound
        is at least the walk of every node's (its best single unit of any kind), so the search stops
        sooner: on alibaba-2017 the movers' units are a few of a node's ~50."""
        key = (job, tuple(tasks), self._session.state_stamp())
        if key == self._walked[0]:
            return self._walked[1]
        in_place, movers = self._now()
        possible = movers[self._possible(movers, job, tasks)]
        jobs = self._session.snapshot.jobs
        # each holding unit once per node it is on, as (node, priority, job, sub): job by job, never node
        # by node (a job brings hundreds of nodes)
        parts: list[tuple[IntArray, int, int, int]] = []
        for v, group in groupby(possible.tolist(), key=self._job_of):
            units = self._index.job_units(v)
            if units.whole is None:
                continue  # the job offers no unit now (a task placed or moved in this cycle)
            start, stop = np.searchsorted(self.jobs, (v, v + 1))  # the job's candidates: contiguous
            priority = jobs[v].priority
            parts.append((np.unique(self.nodes[start:stop][in_place[start:stop]]), priority, v, 0))
            for c in group:  # x's task unit, on x's node (x above ``min_available``), when it has one
                if sub := units.sub_of(int(self.tasks[c])):
                    parts.append((self.nodes[c : c + 1], priority, v, sub))
        walked = _least_by_node(parts)
        self._walked = (key, walked)
        return walked

    def _job_of(self, c: int) -> int:
        return int(self.jobs[c])

    def _possible(self, candidates: IntArray, job: int, tasks: Sequence[int]) -> BoolArray:
        """[len(candidates)] which of these (indices into the columns) could be the one move for
        ``tasks``, but for where they are and whether they can move: (cover) on their node, t's static
        filters there, the ratio, not the preemptor's own."""
        snapshot = self._session.snapshot
        t = tasks[0]
        request = snapshot.task_request[self.rows, t]
        asked = np.flatnonzero(request > 0)
        nodes = self.nodes[candidates]
        deficit = request[asked, None] - snapshot.state.node_free[self.rows[asked]][:, nodes]  # [t's rows, c]
        cover = (self.requests[asked][:, candidates] >= deficit).all(axis=0)
        static = self._session.engine.plan_of(t).static
        gained = self.share(tasks)
        shares = self.shares[candidates]
        ratio_ok = shares / gained <= snapshot.config.max_eviction_ratio if gained > 0 else shares == 0
        return np.asarray(cover & static[nodes] & ratio_ok & (self.jobs[candidates] != job))


def _least_by_node(parts: list[tuple[IntArray, int, int, int]]) -> list[Walked]:
    """(the least ``solo_key`` of the units on each node, node) in increasing order, from units given as
    (their nodes, priority, job, sub). ``solo_key`` orders as (priority, -job, -sub), so both the least
    per node and the walk's order are lexsorts of those columns."""
    if not parts:
        return []
    counts = [nodes.size for nodes, _, _, _ in parts]
    nodes = np.concatenate([part[0] for part in parts])
    priority = np.repeat(np.array([p for _, p, _, _ in parts], dtype=np.int64), counts)
    minus_job = np.repeat(np.array([-v for _, _, v, _ in parts], dtype=np.int64), counts)
    minus_sub = np.repeat(np.array([-k for _, _, _, k in parts], dtype=np.int64), counts)
    by_node = np.lexsort((minus_sub, minus_job, priority, nodes))
    ordered = nodes[by_node]
    first = np.ones(by_node.size, dtype=np.bool_)  # each node's least key comes first in its run
    first[1:] = ordered[1:] != ordered[:-1]
    least = by_node[first]
    order = least[np.lexsort((nodes[least], minus_sub[least], minus_job[least], priority[least]))]
    return [
        (solo_key(p, -a, -b), n)
        for p, a, b, n in zip(
            priority[order].tolist(),
            minus_job[order].tolist(),
            minus_sub[order].tolist(),
            nodes[order].tolist(),
            strict=True,
        )
    ]


def _distinct_columns(columns: IntArray) -> tuple[IntArray, IntArray]:
    """(the distinct columns, [columns] which of them each column is): what ``np.unique(columns, axis=1,
    return_inverse=True)`` gives, but that sorts a structured view of the columns and took 68 ms for
    alibaba's ~58,000 candidates where this lexsort takes 15 ms (once per consolidate action)."""
    if not columns.shape[1]:
        return columns, np.zeros(0, dtype=np.int64)
    order = np.lexsort(columns[::-1])
    ordered = columns[:, order]
    first = np.ones(order.size, dtype=np.bool_)  # the first of each run of equal columns
    first[1:] = (ordered[:, 1:] != ordered[:, :-1]).any(axis=0)
    which = np.empty(order.size, dtype=np.int64)
    which[order] = np.cumsum(first) - 1
    return ordered[:, first], which
