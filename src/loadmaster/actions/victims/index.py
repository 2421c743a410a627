"""The victim units of one evicting action, indexed once per action and kept in step as victims go.

Rebuilding the candidates for every preemptor (every unit of every job, grouped by node, each node's
bound computed) costs O(units) per preemptor: quadratic over an action. Here:

* units are indexed by job once per action, each job's when first asked for (``units.JobUnits``: its
  task units made node by node as the search asks for nodes); a job's units change only when it loses
  tasks (``refresh``), and a pool's entries, when made, then by O(log entries) plus a list insert/delete
  per entry;
* candidates form a **pool** per preemptor key (``VictimRules.preemptor_key``): preemptors with the
  same key have the same victim jobs (``is_victim_job(j, v)`` depends on j only through its key), so
  one pool serves them all; the preemptor's own units are skipped when walking it (old rule v != j);
* a pool keeps one entry ``(solo_key, node, job, sub)`` per (unit, node of the unit), sorted. Walking
  the entries in order and taking each node at its first entry not yet chosen visits the nodes in
  increasing ``(min solo_key over its units, node)``: the search's bound order, with no per-search sort.

Invariant (tested): a pool's entries are exactly the sorted entries of the units its jobs offer now.
"""

from __future__ import annotations

import bisect
import itertools
import weakref
from collections.abc import Callable, Hashable, Iterable, Iterator
from functools import partial

import numpy as np

from loadmaster.actions.victims.fit import TaskNeeds
from loadmaster.actions.victims.offer_memo import OfferMemo
from loadmaster.actions.victims.units import DisruptionKey, DominantShare, JobUnits, Unit
from loadmaster.core.columns.input_sums import sum_by_group
from loadmaster.core.columns.snapshot import BOUND
from loadmaster.queues.hierarchy import BoolArray
from loadmaster.session import IntArray, Session

Entry = tuple[DisruptionKey, int, int, int]  # (unit.solo_key, node, job, sub): node's bound, then node
UnitId = tuple[int, int]  # (job, sub)
Walked = tuple[DisruptionKey, int]  # (bound, node): no offer of the node is less disruptive than bound


def entries_of(unit: Unit) -> list[Entry]:
    key = unit.solo_key
    return [(key, n, unit.job, unit.sub) for n in sorted(unit.nodes)]


class Pool:
    """The candidate units of every preemptor with one key, as sorted entries, made the first time a
    walk of every node needs them (``entries``): a search that asks only a few nodes (``walk_within``)
    and the checks before a search (``VictimIndex.has_candidates``) make only the units they read."""

    def __init__(self, accepts: Callable[[int], bool], candidates: Iterable[int],
                 units_of: Callable[[int], list[Unit]]) -> None:  # fmt: skip
        """``units_of``: the index's bound method, held weakly: the index holds its pools, and a cycle
        through them would keep a whole session (its snapshot) alive until the cyclic collector runs,
        which the server's and the replay's GC policy makes rare."""
        self.accepts = accepts  # is a job a victim job for this key (memoized in ``jobs``)
        self.jobs: dict[int, bool] = {}
        self._candidates = candidates
        self._units_of = weakref.WeakMethod(units_of)
        self._entries: list[Entry] | None = None
        self.offering: list[int] | None = None  # up to two jobs that offer units (``has_candidates``)

    @property
    def entries(self) -> list[Entry]:
        if self._entries is None:
            units_of = self._units_of()
            if units_of is None:
                raise AssertionError("a victim pool outlived its index")
            entries = [
                e for v in self._candidates if self.is_member(v) for u in units_of(v) for e in entries_of(u)
            ]
            entries.sort()
            self._entries = entries
        return self._entries

    @property
    def made(self) -> bool:
        return self._entries is not None

    def is_member(self, v: int) -> bool:
        member = self.jobs.get(v)
        if member is None:
            member = self.jobs[v] = self.accepts(v)
        return member

    def remove(self, units: Iterable[Unit]) -> None:
        if self._entries is None:
            return  # made later from the units as they are then
        for unit in units:
            for entry in entries_of(unit):
                i = bisect.bisect_left(self._entries, entry)
                if i == len(self._entries) or self._entries[i] != entry:
                    raise AssertionError(f"victim index out of step: no entry {entry}")
                del self._entries[i]

    def add(self, units: Iterable[Unit]) -> None:
        if self._entries is None:
            return
        for unit in units:
            for entry in entries_of(unit):
                bisect.insort(self._entries, entry)


class VictimIndex:
    """Units offered now, by job and by node, and the pools built from them so far."""

    def __init__(self, session: Session, is_victim_job: Callable[[int, int], bool],
                 preemptor_key: Callable[[int], Hashable]) -> None:  # fmt: skip
        self.session = session
        self.is_victim_job, self.preemptor_key = is_victim_job, preemptor_key
        self.share = DominantShare(session)
        self.needs = TaskNeeds(session)
        self._job_uses: dict[int, BoolArray] = {}
        self._limited: dict[int, bool] = {}
        # Where each unit task is: units hold only tasks still Running where the input put them.
        self.input_node: IntArray = session.snapshot.state.task_node.astype(np.int64)
        # Only a job with a task Running in the input (and still bound) can offer a unit: the
        # others (the Pending backlog) are not visited, so indexing costs what runs, not what waits.
        # Evictions only take tasks away, so no job joins these candidates during the action.
        snapshot = session.snapshot
        running = snapshot.input_running_tasks
        running = running[snapshot.state.task_phase[running] == BOUND]
        self.candidates: list[int] = _distinct_sorted(snapshot.task_job[running]).tolist()
        self._running_nodes = snapshot.state.task_node[running]
        self._running_jobs = snapshot.task_job[running]
        self._by_node: tuple[IntArray, IntArray] | None = None  # (jobs by node, each node's start)
        # A job's units are made when first asked for (``units_of``, ``on``), not for every candidate
        # up front: an action whose pools admit few victim jobs (none at all where every job shares one
        # queue and priority) then pays a membership test per candidate, and a search that asks a few
        # nodes makes the task units on those nodes only. Making them later gives the same units: a
        # job's units change only when its tasks do, and every search refreshes the jobs it touched.
        self.offered: dict[int, JobUnits] = {}  # the jobs made so far (offering some units or none)
        self._jobs_by_node: dict[int, list[int]] = {}
        self.pools: dict[Hashable, Pool] = {}
        self._releases: dict[int, dict[int, tuple[IntArray, IntArray]]] = {}  # job -> sub -> release
        self._request_rows: dict[tuple[int, ...], IntArray] = {}
        # node offers kept for the action's later searches of one class (``VictimRules.remember_failures``)
        self.offers = OfferMemo(session)

    def request_rows(self, rows: list[int]) -> IntArray:
        """[len(rows), T] every task's request on these rows, copied once per action."""
        key = tuple(rows)
        found = self._request_rows.get(key)
        if found is None:
            found = self._request_rows[key] = self.session.snapshot.task_request[rows]
        return found

    def release(self, unit: Unit) -> tuple[IntArray, IntArray]:
        """(the unit's nodes ascending, [R, nodes] its tasks' requests summed on each): what evicting it
        frees, worked out once per unit in this action (a whole-job unit is offered on every node it
        spans)."""
        of_job = self._releases.setdefault(unit.job, {})
        found = of_job.get(unit.sub)
        if found is None:
            tasks = np.asarray(unit.tasks, dtype=np.int64)
            nodes, inverse = np.unique(self.input_node[tasks], return_inverse=True)
            sums = sum_by_group(self.session.snapshot.task_request[:, tasks], inverse, nodes.size).T
            found = of_job[unit.sub] = (nodes, np.ascontiguousarray(sums))
        return found

    def job_units(self, v: int) -> JobUnits:
        """Job v's units now, made when first asked for."""
        found = self.offered.get(v)
        if found is None:
            found = self.offered[v] = JobUnits.of(self.session, v)
        return found

    def units_of(self, v: int) -> list[Unit]:
        """Job v's units now (all of them: ``on`` makes only a node's)."""
        return self.job_units(v).all()

    def offers_units(self, v: int) -> bool:
        """Whether job v offers any unit now."""
        return self.job_units(v).whole is not None

    def pool(self, preemptor: int) -> Pool:
        key = self.preemptor_key(preemptor)
        found = self.pools.get(key)
        if found is None:
            # The key says the first preemptor's victims are every later one's: bind it now.
            accepts = partial(self.is_victim_job, preemptor)
            found = self.pools[key] = Pool(accepts, self.candidates, self.units_of)
        return found

    def job_uses(self, j: int) -> BoolArray:
        """[R] the resources job j requests (the limits that can stop it)."""
        found = self._job_uses.get(j)
        if found is None:
            found = self._job_uses[j] = self.session.request_of(list(self.session.snapshot.job_tasks[j])) > 0
        return found

    def limited(self, j: int) -> bool:
        """Whether a queue limit can refuse job j's scenarios: one on a resource it uses, at its leaf
        or above (otherwise ``over_limit_after`` never finds one)."""
        found = self._limited.get(j)
        if found is None:
            tree = self.session.queues.tree
            path = tree.paths[int(self.session.queues.job_leaf[j])]
            found = self._limited[j] = bool((tree.limit_set[:, path] & self.job_uses(j)[:, None]).any())
        return found

    def walk(self, pool: Pool, preemptor: int, taken: set[UnitId]) -> Iterator[Walked]:
        """(bound, node) for each node with a candidate not taken, in increasing (bound, node)."""
        seen: set[int] = set()
        for key, n, v, sub in pool.entries:
            if v == preemptor or n in seen or (v, sub) in taken:
                continue
            seen.add(n)
            yield key, n

    def _jobs_on(self, n: int) -> list[int]:
        """The candidate jobs that ran a task on node n when the action started (their units, if any
        are left, are the only ones with a task on n)."""
        found = self._jobs_by_node.get(n)
        if found is None:
            if self._by_node is None:
                order = np.argsort(self._running_nodes, kind="stable")
                nodes, jobs = self._running_nodes[order], self._running_jobs[order]
                starts = np.searchsorted(nodes, np.arange(self.session.snapshot.n_nodes + 1))
                self._by_node = (jobs, starts)
            jobs, starts = self._by_node
            found = self._jobs_by_node[n] = np.unique(jobs[starts[n] : starts[n + 1]]).tolist()
        return found

    def has_candidates(self, pool: Pool, preemptor: int) -> bool:
        """Whether some job but the preemptor offers a unit to this pool. Before its entries are made:
        two jobs that offer units answer it for every preemptor, so the pool keeps the first two it
        finds (the candidates in turn, each job's units made) and looks again only when one of them
        has lost its units (units only go within an action)."""
        if pool.made:
            return any(v != preemptor for _, _, v, _ in pool.entries)
        if pool.offering is None or not all(self.offers_units(v) for v in pool.offering):
            offering = (v for v in self.candidates if pool.is_member(v) and self.offers_units(v))
            pool.offering = list(itertools.islice(offering, 2))
        return any(v != preemptor for v in pool.offering)

    def on(self, n: int, pool: Pool, preemptor: int, taken: set[UnitId]) -> list[Unit]:
        """The candidates with a task on node n that are not taken, in (job, sub) order (the jobs that
        ran a task on n when the action started are the only ones with a unit there)."""
        found: list[Unit] = []
        for v in self._jobs_on(n):
            if v != preemptor and pool.is_member(v):
                units = self.job_units(v).on(n)
                # nothing taken (a search's first offers): the job's units as they are, without a test each
                found.extend(units if not taken else [u for u in units if (v, u.sub) not in taken])
        return found

    def refresh(self, jobs: Iterable[int]) -> None:
        """Jobs whose tasks changed: their units now (fewer, or none) replace the old ones."""
        for v in sorted(set(jobs)):
            old = self.offered.get(v)
            if old is None:
                continue  # not asked for yet: made from the state as it is when it is
            new = self.offered[v] = JobUnits.of(self.session, v)
            self._releases.pop(v, None)
            pools = [pool for pool in self.pools.values() if pool.made and pool.is_member(v)]
            if pools and (old_units := old.all()) != (new_units := new.all()):
                for pool in pools:
                    pool.remove(old_units)
                    pool.add(new_units)


def _distinct_sorted(values: IntArray) -> IntArray:
    """``np.unique`` of a non-decreasing array, without its sort: a job's tasks are contiguous and
    ``running`` ascends, so the running tasks' jobs come in order (on alibaba-2017 ~460,000 of them, in
    each evicting action of every cycle)."""
    if values.size == 0:
        return values
    first = np.empty(values.size, dtype=np.bool_)
    first[0] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    return values[first]
