"""A node is Ready only while its agent's last heartbeat is recent: the one window every part reads.

Agents heartbeat every 10-30 s, so 90 s tolerates two or three lost heartbeats before a node stops
receiving work (CARA B1, JACO's 3 x 30 s freshness; seed conflict #8); a server may set another window
(``--not-ready-after``, a timeline's ``not_ready_after``). The node controller marks a silent node NotReady
with it, at the instant the window runs out (a timer, not a tick); the scheduler's model, which sees
heartbeats age between writes, uses it to tell when a node goes stale.

    fresh  <=>  now < last_heartbeat + window        (stale from the instant the window has passed)
"""

from __future__ import annotations

from datetime import datetime, timedelta

HEARTBEAT_FRESH_FOR = timedelta(seconds=90)


def stale_at(last_heartbeat: datetime | None, window: timedelta = HEARTBEAT_FRESH_FOR) -> datetime | None:
    """The instant a node heard from at ``last_heartbeat`` goes stale (None: never heard from)."""
    return None if last_heartbeat is None else last_heartbeat + window


def is_heartbeat_fresh(
    last_heartbeat: datetime | None, now: datetime, window: timedelta = HEARTBEAT_FRESH_FOR
) -> bool:
    """``now < last_heartbeat + window``. A heartbeat ahead of ``now`` (clock skew) counts as fresh; no
    heartbeat at all is stale. ``now`` must be timezone-aware, as stored heartbeats are."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware (e.g. datetime.now(timezone.utc))")
    return last_heartbeat is not None and now < last_heartbeat + window
