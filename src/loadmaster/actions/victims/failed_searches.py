"""Searches that failed in this action, remembered by the tasks' classes and the state they ran on.

A victim search's course is a function of the state it starts on, the tasks it places and the pool it
walks. When the rules make the pool and every validity rule independent of the preemptor (consolidate:
one pool for every preemptor, victims judged by themselves, ``VictimRules.remember_failures``), two
jobs' searches differ only in

* the tasks: the engine chooses a node for a task by its equivalence class and the working state
  (no task-sensitive scorer: ``TASK_SENSITIVE``), and the ratio divides by ``share(t1..tk)``, a
  function of the requests, which are part of the class: equal class sequences give the same
  scenarios, placements and refusals;
* the preemptor's own units, left out of the walk: equal when neither job offers any;
* a queue limit on a resource the job uses (``over_limit_after`` reads the job): none for either.

So if job A's search failed on a state with reason ``why``, job B's search on the very same state
(``stamp``: the decisions made so far and the open statement's length; a failed search rolls back to
where it started) fails with the same ``why``, and B's note is A's: it is not played again. On
alibaba-2017 half the failing searches of a busy instant repeat an earlier one's classes.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from loadmaster.actions.victims.index import Pool, VictimIndex
from loadmaster.session import Session, StateStamp

Key = tuple[Hashable, ...]


class FailedSearches:
    def __init__(self, session: Session, index: VictimIndex) -> None:
        self._session, self._index = session, index
        self._failed: dict[Key, tuple[StateStamp, str]] = {}  # key -> (stamp, why)

    def _key(self, pool: Pool, job: int, tasks: Sequence[int]) -> Key | None:
        """The tasks' classes, or None when a search of this job is not settled by them."""
        if not tasks or self._index.limited(job) or (pool.is_member(job) and self._index.offers_units(job)):
            return None
        engine = self._session.engine
        return tuple(map(engine.class_of, tasks)) if engine.settled_by_class(tasks[0]) else None

    def recall(self, pool: Pool, job: int, tasks: Sequence[int]) -> str | None:
        """The reason of an earlier failed search that settles this one on this state, else None."""
        key = self._key(pool, job, tasks)
        known = self._failed.get(key) if key is not None else None
        if known is None or known[0] != self._session.state_stamp():
            return None
        return known[1]

    def note(self, pool: Pool, job: int, tasks: Sequence[int], why: str) -> None:
        """The search of ``tasks`` failed with ``why`` (and rolled back to the state it started on)."""
        key = self._key(pool, job, tasks)
        if key is not None:
            self._failed[key] = (self._session.state_stamp(), why)
