"""Each equivalence class's masked totals, kept across calls and refreshed only where the state changed.

``masked[n] = total(n)`` where the class's task is feasible on node n, ``INFEASIBLE`` elsewhere. For a
*local* class (the engine's ``is_local``: a change on node n changes only node n's feasibility and
total), ``masked`` is a function of each node's own state, so after any operations (placements of any
class, evictions, undos) only the nodes the Statement logged (``NodeChanges``) need evaluating again:

    masked_now[n] = evaluate(n)   for n in changed since the entry's mark
    masked_now[n] = masked[n]     otherwise

Invariant (a property test checks it): ``get`` returns exactly what a from-scratch evaluation of every
node gives. Entries are keyed by (class, applicable scorers), since a scorer's applicability may depend
on the state (``node_availability`` applies only while something is releasing); an entry whose log
was cleared, or with more than a quarter of the nodes changed, is evaluated whole (one vector pass is
cheaper than many small ones then). At most ``max_entries`` are kept (least recently used dropped):
with a job-sensitive profile every job is its own class.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from loadmaster.core.working.node_changes import NodeChanges
from loadmaster.placement.extension_points import ALL, Cols, IntArray

# entries x nodes int64 kept at most (32 MiB), and never fewer than a few entries
MAX_CACHED_VALUES = 1 << 22
MIN_ENTRIES = 8

Evaluate = Callable[[Cols], IntArray]


@dataclass(slots=True)
class _Entry:
    masked: IntArray
    mark: tuple[int, int]


class TotalsCache:
    def __init__(self, changes: NodeChanges, n_nodes: int) -> None:
        self._changes = changes
        self._n_nodes = n_nodes
        self._max_entries = max(MIN_ENTRIES, MAX_CACHED_VALUES // max(n_nodes, 1))
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()

    def get(self, key: Hashable, evaluate: Evaluate) -> IntArray:
        """The class's current masked totals. The array is the cache's own: a caller may write a node's
        new value into it (what ``evaluate`` would give for that node now), never anything else."""
        entry = self._entries.get(key)
        if entry is None:
            entry = _Entry(evaluate(ALL), self._changes.mark())
            self._entries[key] = entry
            if len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
            return entry.masked
        self._entries.move_to_end(key)
        changed = self._changes.since(entry.mark)
        if changed is None or 4 * changed.size > self._n_nodes:
            entry.masked = evaluate(ALL)
        elif changed.size:
            entry.masked[changed] = evaluate(changed)
        entry.mark = self._changes.mark()
        return entry.masked
