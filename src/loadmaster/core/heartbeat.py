"""A node is Ready only while its agent's last heartbeat is recent: the one window every part reads.

Agents heartbeat every 10-30 s, so 90 s tolerates two or three lost heartbeats before a node stops
receiving work (CARA B1, JACO's 3 x 30 s freshness; seed conflict #8). The node controller marks a
silent node NotReady with it; the scheduler's model, which sees heartbeats age between writes, uses it
to tell when a node goes stale.
"""

from __future__ import annotations

from datetime import datetime, timedelta

HEARTBEAT_FRESH_FOR = timedelta(seconds=90)


def is_heartbeat_fresh(last_heartbeat: datetime | None, now: datetime) -> bool:
    """``now - last_heartbeat <= 90 s``. A heartbeat ahead of ``now`` (clock skew) counts as fresh; no
    heartbeat at all is stale. ``now`` must be timezone-aware, as stored heartbeats are."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware (e.g. datetime.now(timezone.utc))")
    return last_heartbeat is not None and now - last_heartbeat <= HEARTBEAT_FRESH_FOR
