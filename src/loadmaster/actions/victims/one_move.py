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

x is a candidate victim (a task Running where the input put it, of a preemptible job other than the
preemptor's), m passes t's static filters, and the ratio holds for the moved set {x}:
``share(x) / share(t1..tk) <= max_eviction_ratio`` with the scenario's own float formula
(``DominantShare``). No candidate x with all of that: no offer can be valid, and the search would walk
every node's offer to fail with the plain "no victim set lets it fit"; ``walk`` finds no node then. When
some candidates can be x, only the nodes that hold a unit with one of them can make a valid offer:
``walk`` names them, and the search works out no other node's offer (on alibaba-2017, a median of 18
nodes of ~1,300).

Cost: the candidates' columns once per action, where they are once per state, and per search one
comparison per candidate, then whether the few left can move (once per distinct request among them: a
[requests, nodes] comparison).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from loadmaster.actions.victims.units import DominantShare
from loadmaster.core.columns.snapshot import BOUND
from loadmaster.queues.hierarchy import BoolArray
from loadmaster.session import IntArray, Session, StateStamp

FloatArray = np.ndarray


class OneMoveLanding:
    """Per action (consolidate): the candidate victims as columns; where they are, per state."""

    def __init__(self, session: Session) -> None:
        self._session = session
        snapshot = session.snapshot
        request = snapshot.task_request
        self.rows: IntArray = np.array(
            [r for r in range(request.shape[0]) if r != snapshot.gpu_row], np.int64
        )
        running = snapshot.input_running_tasks
        self.tasks: IntArray = running[snapshot.job_preemptible[snapshot.task_job[running]]]
        self.jobs: IntArray = snapshot.task_job[self.tasks].astype(np.int64)
        self.nodes: IntArray = snapshot.state.task_node[self.tasks].astype(
            np.int64
        )  # where the input ran them
        self.requests: IntArray = request[self.rows][:, self.tasks]  # [non-GPU rows, candidates]
        self.share = DominantShare(session)
        # each candidate's share, as the scenario's ratio works it out for a set of one task
        shares = request[self.share.rows][:, self.tasks] / self.share.allocatable[:, None]
        self.shares: FloatArray = shares.max(axis=0, initial=0.0)
        self._stamp: StateStamp | None = None
        self._in_place: BoolArray = np.zeros(0, dtype=np.bool_)
        self._walked: tuple[object, BoolArray] = (None, np.zeros(0, dtype=np.bool_))  # the last ``walk``

    def _in_place_now(self) -> BoolArray:
        """[candidates] still Running where the input ran them (a unit's tasks), on this state."""
        stamp = self._session.state_stamp()
        if stamp != self._stamp:
            state = self._session.snapshot.state
            in_place = (state.task_phase[self.tasks] == BOUND) & (state.task_node[self.tasks] == self.nodes)
            self._stamp, self._in_place = stamp, in_place
        return self._in_place

    def walk(self, job: int, tasks: Sequence[int]) -> BoolArray:
        """[nodes] the nodes whose offer may be valid with at most one move, for ``tasks`` (job ``job``),
        whose first task fits no node's free room now (the caller checks: ``first_fits_nowhere``):
        none at all when no candidate can be the move (module docstring). The move x is a task of a
        unit of the offer, and a node offers only units with a task on it: x's task unit (on x's node)
        or its job's whole unit (on every node the job runs on), so the nodes that run a task of a job
        with such an x are the only ones worth an offer."""
        key = (job, tuple(tasks), self._session.state_stamp())
        if key == self._walked[0]:
            return self._walked[1]
        nodes = np.zeros(self._session.snapshot.n_nodes, dtype=np.bool_)
        in_place = self._in_place_now()
        possible = np.flatnonzero(self._possible(job, tasks) & in_place)
        possible = possible[self._movable(possible)]
        if possible.size:
            jobs = np.unique(self.jobs[possible])
            nodes[self.nodes[in_place & np.isin(self.jobs, jobs)]] = True
        self._walked = (key, nodes)
        return nodes

    def _possible(self, job: int, tasks: Sequence[int]) -> BoolArray:
        """[candidates] which could be the one move for ``tasks``, but for where they are and whether they
        can move: (cover) on their node, t's static filters there, the ratio, not the preemptor's own."""
        snapshot = self._session.snapshot
        t = tasks[0]
        request = snapshot.task_request[self.rows, t]
        asked = np.flatnonzero(request > 0)
        deficit = request[asked, None] - snapshot.state.node_free[self.rows[asked]]  # [t's rows, nodes]
        cover = (self.requests[asked] >= deficit[:, self.nodes]).all(axis=0)
        static = self._session.engine.plan_of(t).static
        gained = self.share(tasks)
        ratio_ok = (
            self.shares / gained <= snapshot.config.max_eviction_ratio if gained > 0 else self.shares == 0
        )
        return np.asarray(cover & static[self.nodes] & ratio_ok & (self.jobs != job))

    def _movable(self, candidates: IntArray) -> BoolArray:
        """[len(candidates)] whether each (an index into the columns) fits the free room of a node other
        than its own now, on its non-GPU rows; worked out once per distinct request among them."""
        if not candidates.size:
            return np.zeros(0, dtype=np.bool_)
        requests = self.requests[:, candidates]
        order = np.lexsort(requests[::-1])
        ordered = requests[:, order]
        first = np.ones(order.size, dtype=np.bool_)  # the first of each run of equal requests
        first[1:] = (ordered[:, 1:] != ordered[:, :-1]).any(axis=0)
        which = np.empty(order.size, dtype=np.int64)
        which[order] = np.cumsum(first) - 1
        free = self._session.snapshot.state.node_free[self.rows]
        fits = np.asarray(
            (free[:, None, :] >= ordered[:, first][:, :, None]).all(axis=0)
        )  # [requests, nodes]
        elsewhere = fits.sum(axis=1)[which] - fits[which, self.nodes[candidates]]
        return np.asarray(elsewhere > 0)
