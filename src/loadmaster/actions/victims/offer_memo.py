"""Node offers remembered across the searches of one action, by the task's class and the state.

A node's offer for the first task (i = 1, nothing chosen yet) is worked out from the candidates with a
task on the node (``VictimIndex.on``), the task, and the state: the reprieve asks whether the task can be
placed with units evicted, and the offer's scenario places it and re-places the victims. When the rules
ignore the preemptor (``VictimRules.remember_failures``: one pool, victims and ``check`` judged by
themselves), the preemptor enters only through

* its task's class (the engine's node choice; no task-sensitive scorer) and share (the ratio's divisor,
  a function of the request, which is part of the class);
* its own units, left out of the candidates: the offer of node n is the same for two preemptors when
  their candidate lists on n are the same units (compared by ``(job, sub)``);
* a queue limit on a resource it uses (``over_limit_after``): the memo is not used for such a job.

So on the same state (``stamp``: decisions made so far and the statement's length, taken when the search
starts: a failed search rolls back, a successful one adds decisions) and the same candidates on n, a
later search of the same class gets node n's offer without the reprieve and the scenario. On
alibaba-2017 half the searches of a busy instant repeat an earlier one's class, and most of their
jobs run tasks of their own (so ``failed_searches.py`` does not settle them), on a few nodes only.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from loadmaster.actions.victims.units import Unit
from loadmaster.session import Session, StateStamp

UnitIds = tuple[tuple[int, int], ...]
Offer = tuple[UnitIds, UnitIds | None]  # (the candidates on the node, the units offered or None)


class OfferMemo:
    def __init__(self, session: Session) -> None:
        self._session = session
        self._offers: dict[Hashable, tuple[StateStamp, dict[int, Offer]]] = {}

    def key(self, tasks: Sequence[int], limited: bool) -> Hashable | None:
        """The key of a search of ``tasks`` (by a job with a queue limit on what it uses: ``limited``),
        or None when its offers are not settled by their class."""
        if not tasks or limited:
            return None
        engine = self._session.engine
        return tuple(map(engine.class_of, tasks)) if engine.settled_by_class(tasks[0]) else None

    def recall(self, key: Hashable, stamp: StateStamp, n: int,
               on_node: Sequence[Unit]) -> tuple[bool, list[Unit] | None]:  # fmt: skip
        """(known, node n's offer: the units, or None for no offer) as worked out on this state for
        these candidates."""
        found = self._offers.get(key)
        if found is None or found[0] != stamp:
            return False, None
        offer = found[1].get(n)
        if offer is None or offer[0] != _ids(on_node):
            return False, None
        if offer[1] is None:
            return True, None
        kept = set(offer[1])
        return True, [u for u in on_node if (u.job, u.sub) in kept]

    def note(self, key: Hashable, stamp: StateStamp, n: int, on_node: Sequence[Unit],
             kept: list[Unit] | None) -> None:  # fmt: skip
        found = self._offers.get(key)
        if found is None or found[0] != stamp:
            found = self._offers[key] = (stamp, {})
        found[1][n] = (_ids(on_node), None if kept is None else _ids(kept))


def _ids(units: Sequence[Unit]) -> UnitIds:
    return tuple([(u.job, u.sub) for u in units])
