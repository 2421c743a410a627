"""The revision of the last committed write to each group of keys, for ``Store.known_revision(prefix)``.

A key's group is the directory of its first two path segments (``/objects/replicas/``,
``/counters/deployments/``), or of its first when it has two (``/heartbeats/n1`` is in
``/heartbeats/``), or the key itself when it has one (``/leader``). Every
key under a prefix ``P`` has a group ``G`` with ``G`` under ``P`` or ``P`` under ``G`` (both are
prefixes of the key), so::

    under(P) = max(revision[G] for every group G with G.startswith(P) or P.startswith(G))

is at least the revision of every write to a key under ``P``. Why groups and not the one store-wide
revision: a reader of deployments need not wait for the heartbeats and replica writes of the last
millisecond (83 heartbeats a second in bench/busy_cycle.py kept the object cache behind the store's
revision a good part of the time). A few dozen groups: a reading is a scan of them.

The SQLite writer thread records while the event loop reads: ``record`` swaps in a new dict, so a
reader never sees one changing under it.
"""

from __future__ import annotations

from collections.abc import Iterable


def group_of(key: str) -> str:
    """``/a/b/c...`` -> ``/a/b/``, ``/a/b`` -> ``/a/``, ``/a`` -> ``/a``: at most two directories deep,
    so that heartbeats (``/heartbeats/<node>``) and audit entries are one group each, not one a key."""
    first = key.find("/", 1)
    if first == -1:
        return key
    second = key.find("/", first + 1)
    return key[: (second if second != -1 else first) + 1]


class RevisionsByGroup:
    """``start``: the store's revision when this began to record (every group's until written again)."""

    def __init__(self, start: int = 0) -> None:
        self._start = start
        self._revisions: dict[str, int] = {}

    def record(self, keys: Iterable[str], revision: int) -> None:
        """The keys were written at ``revision`` (called after the commit, before anyone is told)."""
        self._revisions = {**self._revisions, **dict.fromkeys(map(group_of, keys), revision)}

    def under(self, prefix: str) -> int:
        """At least the revision of the last write to any key under ``prefix``."""
        revisions = self._revisions  # the dict of this moment (``record`` swaps in a new one)
        return max(
            (rev for group, rev in revisions.items() if group.startswith(prefix) or prefix.startswith(group)),
            default=self._start,
        )
