"""Which replacements (``X.next``) the controller loop looks at in a pass, and when it must wake for one.

A replacement is looked at when it changed (a bind, the agent's Running report), when the replica it
replaces changed (it may be going away), and when its deadline comes: a timer on the loop's clock
(``DeadlineHeap``), not a tick. A full pass looks at all of them.
"""

from __future__ import annotations

from datetime import datetime

from loadmaster.manifests.replicas import replacement_name
from loadmaster.manifests.timestamps import parse_timestamp
from loadmaster.runtime.plane.object_cache import Cached
from loadmaster.runtime.reconciling.deadline_heap import DeadlineHeap


class ReplacementTracking:
    def __init__(self) -> None:
        self.replacements: set[str] = set()  # the names of every stored replacement
        self._dirty: set[str] = set()
        self._deadlines = DeadlineHeap()

    def follow(self, name: str, after: Cached | None) -> bool:
        """The replica ``name`` as the cache now holds it; True if a replacement needs a look."""
        spec = after.obj.get("spec", {}) if after is not None else {}
        if spec.get("replaces"):
            self.replacements.add(name)
            self._dirty.add(name)
            deadline = spec.get("replacement_deadline")
            self._deadlines.set(name, parse_timestamp(deadline) if deadline else None)
            return True
        self.replacements.discard(name)
        self._deadlines.set(name, None)
        if replacement_name(name) in self.replacements:  # the replica a replacement replaces changed
            self._dirty.add(replacement_name(name))
            return True
        return False

    def take(self, full: bool, now: datetime) -> set[str]:
        """The replacements to look at in a pass at ``now``."""
        names, self._dirty = self._dirty, set()
        names.update(self._deadlines.pop_due(now))
        if full:
            names |= self.replacements
        return names & self.replacements

    def earliest_deadline(self) -> datetime | None:
        return self._deadlines.earliest()
