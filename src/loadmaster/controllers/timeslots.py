"""The end of a time-slot (LRS K3): at ``end`` every replica of the owner still Pending, Scheduled or
Running is stopped with its stop semantics (reason ``timeslot_ended``), and none is created again;
replicas already finished (Failed, Succeeded) are left as they are."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from loadmaster.controllers.changes import Change
from loadmaster.controllers.removal import remove
from loadmaster.controllers.views import PENDING, PLACED_PHASES, ReplicaView

TIMESLOT_ENDED = "timeslot_ended"


def is_slot_over(end: datetime | None, now: datetime) -> bool:
    return end is not None and now >= end


def stop_at_slot_end(owner: str, end: datetime, replicas: Sequence[ReplicaView]) -> list[Change]:
    """The owner's slot ended at ``end``: stop what still runs or waits."""
    message = f"{owner}'s time-slot ended at {end.isoformat()}"
    return [
        remove(replica, TIMESLOT_ENDED, message)
        for replica in sorted(replicas, key=lambda r: r.name)
        if replica.phase == PENDING or replica.phase in PLACED_PHASES
    ]
