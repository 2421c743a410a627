"""Node health: a node whose agent has not reported for 90 s is NotReady.

Agents heartbeat every 10-30 s, so 90 s tolerates two or three lost heartbeats before a node stops
receiving work (CARA B1, JACO's 3 x 30 s freshness; seed conflict #8). A heartbeat through the API
sets the node Ready again.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from loadmaster.controllers.changes import Change, MarkNodeNotReady
from loadmaster.controllers.views import NodeView

NOT_READY_AFTER = timedelta(seconds=90)
READY = "Ready"
NOT_READY = "NotReady"


def is_heartbeat_fresh(node: NodeView, now: datetime) -> bool:
    """``now - last_heartbeat <= 90 s``; a heartbeat ahead of ``now`` (clock skew) counts as fresh."""
    return node.last_heartbeat is not None and now - node.last_heartbeat <= NOT_READY_AFTER


def is_ready(node: NodeView, now: datetime) -> bool:
    """Ready = a fresh heartbeat and no NotReady verdict written since."""
    return node.state != NOT_READY and is_heartbeat_fresh(node, now)


def reconcile_nodes(nodes: Iterable[NodeView], now: datetime) -> list[Change]:
    """Mark NotReady every node not already marked whose heartbeat is missing or older than 90 s."""
    changes: list[Change] = []
    for node in sorted(nodes, key=lambda n: n.name):
        if node.state == NOT_READY or is_heartbeat_fresh(node, now):
            continue
        if node.last_heartbeat is None:
            message = "no heartbeat received yet"
        else:
            silent_s = int((now - node.last_heartbeat).total_seconds())
            message = f"no heartbeat for {silent_s}s (NotReady after {int(NOT_READY_AFTER.total_seconds())}s)"
        changes.append(MarkNodeNotReady(node.name, node.revision, message))
    return changes
