"""Job controller: one replica ``<job>-<index>`` per task index ``0 .. tasks-1``.

A Job's indices are its task numbers, not a counter: a task's replica keeps its name for the Job's
whole life. A missing index (never created, or its record removed after an eviction) is created
again; an index beyond ``tasks`` (the Job was shrunk) is removed. A changed spec re-creates only the
replicas still Pending (their record is deleted, then created again with the new spec on the next
pass); replicas already placed keep running the spec they started with. Failed and Succeeded
replicas stay as they are: a finished task is never run again by itself (A7).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from loadmaster.controllers.changes import Change, CreateJobReplicas, DeleteReplica
from loadmaster.controllers.removal import remove
from loadmaster.controllers.views import PENDING, JobView, ReplicaView


def reconcile_job(
    name: str, desired: JobView | None, observed: Sequence[ReplicaView], now: datetime
) -> list[Change]:
    """The changes that make job ``name``'s replicas match ``desired`` (None: it was deleted)."""
    changes: list[Change] = []
    replicas = sorted(observed, key=lambda r: (r.index if r.index is not None else -1, r.name))
    if desired is None:
        return [remove(r, "JobDeleted", f"job {name} was deleted") for r in replicas if not r.is_leaving]
    taken: set[int] = set()
    for replica in replicas:
        if replica.is_replacement:  # one slot with the replica it replaces (controllers/replacement.py)
            continue
        if replica.index is not None:
            taken.add(replica.index)
        if replica.is_leaving:
            continue
        if replica.index is None or replica.index >= desired.tasks:
            changes.append(remove(replica, "ScaledDown", f"job {name} now has {desired.tasks} tasks"))
        elif replica.phase == PENDING and replica.spec_hash != desired.spec_hash:
            changes.append(DeleteReplica(replica.name, replica.revision, "SpecChanged"))
    missing = tuple(index for index in range(desired.tasks) if index not in taken)
    if missing:
        changes.append(CreateJobReplicas(name, missing))
    return changes
