"""Time-slots in the scheduler (LRS K3): an owner's replicas wait until ``start - timeslot_lead_time``.

A replica before its window is not an attempt that failed: it is blocked with reason
``TimeslotNotOpen``, a message saying when it will be considered, and ``next_attempt_at`` set to that
moment, so the scheduler sleeps until then (as it does for a backoff) and ``why`` says when.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from loadmaster.manifests.timeslots import timeslot_of
from loadmaster.manifests.timestamps import format_timestamp

# The seeds' lead time (LRS K3): nodes are prepared 35 minutes before a reservation starts.
DEFAULT_TIMESLOT_LEAD = timedelta(minutes=35)
TIMESLOT_NOT_OPEN = "TimeslotNotOpen"


def opens_at(owner_spec: Mapping[str, Any], lead: timedelta) -> datetime | None:
    """``start - lead`` of the owner's time-slot (None: no time-slot)."""
    window = timeslot_of(owner_spec)
    return None if window is None else window.start - lead


def before_window_message(when: datetime, lead: timedelta) -> str:
    """What ``why`` says of a replica whose window opens at ``when``."""
    minutes = lead.total_seconds() / 60
    return (
        f"time-slot starts at {format_timestamp(when + lead)}; considered for placement from "
        f"{format_timestamp(when)} ({minutes:g} min lead time)"
    )
