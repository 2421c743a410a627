"""A voluntary move (rebalance, consolidate) as store operations: a make-before-break replacement of the
replica, created bound to its reserved destination (``StartReplacement`` with ``node``).

The old incarnation keeps running on its node until the replacement runs on the destination; then the
replacement rule swaps them in one transaction (same name) and the old one's agent stops it with its
stop signal and grace period. A replacement not running by ``deadline`` is given up and the replica
stays where it was.
"""

from __future__ import annotations

from datetime import datetime

from loadmaster.controllers.changes import StartReplacement
from loadmaster.manifests import REPLICA
from loadmaster.runtime.plane.object_cache import ObjectCache
from loadmaster.runtime.reconciling.writes.replacement_writes import replacement_ops
from loadmaster.store.interface import Op


def move_start_ops(
    cache: ObjectCache, replica: str, dst: str, reason: str, deadline: datetime, now: datetime
) -> list[Op]:
    """The ops that start moving ``replica`` to ``dst`` (none when it is gone or changed meanwhile)."""
    cached = cache.get(REPLICA, replica)
    if cached is None:
        return []
    change = StartReplacement(replica, cached.mod_revision, reason, node=dst, deadline=deadline)
    return replacement_ops(cache, change, now) or []
