"""Whether the victims of an offer can all land again, bounded before its scenario is played.

Consolidate's scenario S(V; t) is valid only if every victim ends placed (Moved, or back on its own
node). Take one task t that fits no node's free room now on some non-GPU row (``FitBound.blocked``),
no overcommit anywhere and no node past its allocatable (``total_free_room``): the conditions of the
spent-budget argument (``fit.py``). Evicting V gives ``room_V = node_free + requests of V's tasks`` on
the nodes V touches; t lands on some node m with ``room_V[:, m] >= request_t`` (and m passes t's
static filters). Every later placement is checked for room, so after the scenario, on each non-GPU row
r that t requests, m's free room is still >= 0:

    0 <= free[r, m] + rel_m[r] - request_t[r] - (requests of the victims that land on m)[r]
      <= free[r, m] - request_t[r] + (requests of V's tasks on m that left m)[r]

so the tasks of V on m that left m ask for at least ``deficit[r, m] = request_t[r] - free[r, m]``.
Each of them was placed on another node n' when n' had room for it, and a node's room during the
scenario never exceeds ``room_V`` (after the evictions only placements change it). So with

    movable_m = { v in V on m : room_V[:, n'] >= request_v on v's non-GPU rows, for some n' != m },

a valid scenario needs a node m where t fits ``room_V`` and

    sum over movable_m of request[r]  >= deficit[r, m]               on every row r,
    k(m) = max_r (fewest movable_m tasks whose largest requests on r reach deficit[r, m]) <= moves left,
    max_r deficit[r, m] / A_r  (the least share of what left m) / share(t)  <= max_eviction_ratio

(the tasks that left m are Moved: counted by the moves budget and, with the same float formula, in the
ratio's share, which only grows with its set). ``cannot_land`` is True only when no node m passes: the
scenario cannot be valid, and playing it would only say so.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from loadmaster.actions.victims.fit import FitBound, TaskNeeds
from loadmaster.actions.victims.units import DominantShare
from loadmaster.core.columns.input_sums import sum_by_group
from loadmaster.queues.hierarchy import BoolArray
from loadmaster.session import Session

Needs = list[tuple[int, int]]


class LandingBound:
    FEW_VICTIMS = 16  # up to this many victim tasks, an offer on one node is checked on Python ints

    def __init__(self, session: Session, t: int, fit: FitBound, needs: TaskNeeds, share: DominantShare,
                 gained: float, max_ratio: float, move_limit: int | None) -> None:  # fmt: skip
        """Taken at the search's starting state, like ``fit`` (every scenario starts from it)."""
        self.request, self.input_node, self.free = fit.request, fit.input_node, fit.free
        self.needs = needs
        self.t_needs: Needs = fit.blocked[t]
        self.static: BoolArray = session.engine.plan_of(t).static.copy()
        denominators = dict(zip(share.rows.tolist(), share.denominators, strict=True))
        self.t_denominators = [denominators.get(r, 0) for r, _ in self.t_needs]
        self.gained, self.max_ratio, self.move_limit = gained, max_ratio, move_limit
        self._fits_free: dict[bytes, tuple[BoolArray, int]] = {}  # request -> (fits node_free by node, count)

    @classmethod
    def of(cls, session: Session, tasks: Sequence[int], fit: FitBound, needs: TaskNeeds,
           share: DominantShare, gained: float, move_limit: int | None) -> LandingBound | None:  # fmt: skip
        """The bound for a search of one task that fits no node now, where the argument holds."""
        if len(tasks) != 1 or tasks[0] not in fit.blocked or fit.total_free is None:
            return None
        max_ratio = session.snapshot.config.max_eviction_ratio
        return cls(session, tasks[0], fit, needs, share, gained, max_ratio, move_limit)

    def _fits_free_now(self, v: int) -> tuple[BoolArray, int]:
        """(whether v fits each node's free room now, on its non-GPU rows; on how many nodes)."""
        rows, _, key = self.needs.of(v)
        found = self._fits_free.get(key)
        if found is None:
            fits = np.asarray((self.free[rows] >= self.request[rows, v, None]).all(axis=0))
            found = self._fits_free[key] = (fits, int(np.count_nonzero(fits)))
        return found

    def cannot_land(self, victims: Sequence[int]) -> bool:
        """True only if S(V; t) cannot be valid, V's tasks being ``victims`` (module docstring)."""
        if not victims:
            return False
        if len(victims) <= self.FEW_VICTIMS:
            nodes = self.input_node[list(victims)].tolist()
            if len(set(nodes)) == 1:
                return self._cannot_land_on_one_node(victims, nodes[0])
        victim_array = np.asarray(victims, dtype=np.int64)
        touched, inverse = np.unique(self.input_node[victim_array], return_inverse=True)
        room = self.free[:, touched] + sum_by_group(self.request[:, victim_array], inverse, touched.size).T
        t_rows = [r for r, _ in self.t_needs]
        t_amounts = np.array([a for _, a in self.t_needs], dtype=np.int64)[:, None]
        landing = self.static[touched] & (room[t_rows] >= t_amounts).all(axis=0)
        if not landing.any():
            return False  # t is not placed: the play says so (and the caller reads ``placed``)
        # each victim: movable off its node? (room_V on another touched node, or free room elsewhere)
        movable = np.zeros(len(victims), dtype=np.bool_)
        by_request: dict[bytes, list[int]] = {}
        for position, v in enumerate(victims):
            by_request.setdefault(self.needs.of(v)[2], []).append(position)
        for positions in by_request.values():
            v = victims[positions[0]]
            rows = self.needs.of(v)[0]
            fits_free, count = self._fits_free_now(v)
            outside = count - int(np.count_nonzero(fits_free[touched]))  # untouched nodes keep node_free
            if outside > 0:
                movable[positions] = True
                continue
            fits_room = np.asarray((room[rows] >= self.request[rows, v, None]).all(axis=0))  # [touched]
            fitting = int(np.count_nonzero(fits_room))
            own = inverse[positions]
            movable[positions] = fitting - fits_room[own] > 0
        for k in np.flatnonzero(landing).tolist():
            m = int(touched[k])
            leaving = self.request[:, victim_array[movable & (inverse == k)]].T.tolist()
            if self._may_host(leaving, self.free[:, m].tolist()):
                return False
        return True

    def _cannot_land_on_one_node(self, victims: Sequence[int], n: int) -> bool:
        """``cannot_land`` when V's tasks are all on node n (an offer of task units), on Python ints: t
        can only land on n (it fits no other node's room), and a victim can leave n only for another
        node's free room now."""
        if not self.static[n]:
            return False
        free_n: list[int] = self.free[:, n].tolist()
        columns: list[list[int]] = self.request[:, list(victims)].T.tolist()
        if any(free_n[r] + sum(c[r] for c in columns) < amount for r, amount in self.t_needs):
            return False  # t is not placed: the play says so
        leaving = []
        for v, column in zip(victims, columns, strict=True):
            fits_free, count = self._fits_free_now(v)
            if count - bool(fits_free[n]) > 0:
                leaving.append(column)
        return not self._may_host(leaving, free_n)

    def _may_host(self, leaving: list[list[int]], free_m: list[int]) -> bool:
        """Whether t may land on a node m with free room ``free_m`` now and every victim landing too,
        the tasks of V on m that may leave it asking ``leaving``: the sums, moves and ratio bounds."""
        least_share, fewest = 0.0, 0
        for (r, amount), denominator in zip(self.t_needs, self.t_denominators, strict=True):
            deficit = amount - free_m[r]
            if deficit <= 0:
                continue
            reach, count = 0, 0  # the largest requests first: the fewest tasks that reach the deficit
            for asked in sorted((column[r] for column in leaving), reverse=True):
                if reach >= deficit:
                    break
                reach, count = reach + asked, count + 1
            if reach < deficit:
                return False
            fewest = max(fewest, count)
            if denominator > 0:
                least_share = max(least_share, deficit / denominator)
        if self.move_limit is not None and fewest > self.move_limit:
            return False
        gained = self.gained
        ratio = least_share / gained if gained > 0 else (0.0 if least_share == 0 else float("inf"))
        return not ratio > self.max_ratio
