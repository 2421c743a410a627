"""Which draining nodes the controller loop looks at in a pass, and when it must wake for a drain.

Drains are few and short, so the rule is simple: while any node drains, every replica change marks
every draining node to be looked at (a swap, a bind, a stop may be what it waits for), and each drain's
deadline is a timer on the loop's clock (``DeadlineHeap``). Replicas are indexed by node, so a look
costs the replicas on that node, not the cluster.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from loadmaster.controllers.views import DRAINING
from loadmaster.manifests.timestamps import parse_timestamp
from loadmaster.runtime.plane.object_cache import Cached
from loadmaster.runtime.reconciling.deadline_heap import DeadlineHeap


def _node_of(cached: Cached | None) -> str | None:
    node = cached.obj.get("status", {}).get("node_ref") if cached is not None else None
    return node if isinstance(node, str) else None


class DrainTracking:
    def __init__(self) -> None:
        self._on_node: dict[str, set[str]] = {}  # node -> names of the replicas whose node_ref it is
        self.draining: set[str] = set()
        self._dirty: set[str] = set()
        self._deadlines = DeadlineHeap()

    def on_node(self, node: str) -> Iterable[str]:
        return sorted(self._on_node.get(node, ()))

    def follow_replica(self, name: str, before: Cached | None, after: Cached | None) -> bool:
        """Keep the index; True if a drain needs a look."""
        old, new = _node_of(before), _node_of(after)
        if old != new:
            if old is not None:
                self._on_node[old].discard(name)
                if not self._on_node[old]:
                    del self._on_node[old]
            if new is not None:
                self._on_node.setdefault(new, set()).add(name)
        if not self.draining:
            return False
        self._dirty |= self.draining
        return True

    def follow_node(self, name: str, after: Cached | None) -> bool:
        """True if the node drains (or just stopped draining): it needs a look."""
        drain = after.obj.get("status", {}).get("drain") if after is not None else None
        was = name in self.draining
        if isinstance(drain, dict) and drain.get("state") == DRAINING:
            self.draining.add(name)
            self._dirty.add(name)
            self._deadlines.set(name, parse_timestamp(drain["deadline"]))
            return True
        self.draining.discard(name)
        self._deadlines.set(name, None)
        return was

    def take(self, full: bool, now: datetime) -> set[str]:
        names, self._dirty = self._dirty, set()
        names.update(self._deadlines.pop_due(now))
        if full:
            names |= self.draining
        return names & self.draining

    def earliest_deadline(self) -> datetime | None:
        return self._deadlines.earliest()
