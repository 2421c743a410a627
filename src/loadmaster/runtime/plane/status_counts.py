"""Replicas by phase and nodes by state, kept one cache change at a time.

``/api/admin/stats`` and ``/api/info`` (which the dashboard and ``status -w`` poll) counted them afresh
on each call: a walk over every replica on the event loop, ~10 ms at 20,000 replicas (issue 12's busy
cycle bench polls stats twice a second). A listener on the cache keeps the counts instead; a heartbeat
changes no state (the cache tells only its heartbeat listeners of it), so it costs nothing here.
"""

from __future__ import annotations

from collections import Counter

from loadmaster.manifests import NODE, REPLICA
from loadmaster.runtime.plane.object_cache import Cached, ObjectCache

# What an object without the field counts as (as the stats always said).
DEFAULTS = {REPLICA: ("phase", "Pending"), NODE: ("state", "NotReady")}


class StatusCounts:
    def __init__(self, cache: ObjectCache) -> None:
        self.by_kind: dict[str, Counter[str]] = {kind: Counter() for kind in DEFAULTS}
        for kind in DEFAULTS:
            for cached in cache.objects[kind].values():
                self.by_kind[kind][_value(kind, cached)] += 1
        cache.add_listener(self._on_change)

    @property
    def replica_phases(self) -> Counter[str]:
        return self.by_kind[REPLICA]

    @property
    def node_states(self) -> Counter[str]:
        return self.by_kind[NODE]

    def _on_change(self, kind: str, name: str, before: Cached | None, after: Cached | None) -> None:
        counts = self.by_kind.get(kind)
        if counts is None:
            return
        if before is not None:
            value = _value(kind, before)
            counts[value] -= 1
            if counts[value] <= 0:
                del counts[value]
        if after is not None:
            counts[_value(kind, after)] += 1


def _value(kind: str, cached: Cached) -> str:
    field, default = DEFAULTS[kind]
    return str((cached.obj.get("status") or {}).get(field, default))
