"""Node health: a node whose agent has not reported for 90 s (``core.heartbeat``) is NotReady.

A heartbeat through the API sets the node Ready again.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from loadmaster.controllers.changes import Change, MarkNodeNotReady
from loadmaster.controllers.views import NodeView
from loadmaster.core.heartbeat import HEARTBEAT_FRESH_FOR, is_heartbeat_fresh

NOT_READY = "NotReady"


def is_ready(node: NodeView, now: datetime) -> bool:
    """Ready = a fresh heartbeat and no NotReady verdict written since."""
    return node.state != NOT_READY and is_heartbeat_fresh(node.last_heartbeat, now)


def reconcile_nodes(nodes: Iterable[NodeView], now: datetime) -> list[Change]:
    """Mark NotReady every node not already marked whose heartbeat is missing or older than 90 s."""
    changes: list[Change] = []
    for node in sorted(nodes, key=lambda n: n.name):
        if node.state == NOT_READY or is_heartbeat_fresh(node.last_heartbeat, now):
            continue
        if node.last_heartbeat is None:
            message = "no heartbeat received yet"
        else:
            silent_s = int((now - node.last_heartbeat).total_seconds())
            message = (
                f"no heartbeat for {silent_s}s (NotReady after {int(HEARTBEAT_FRESH_FOR.total_seconds())}s)"
            )
        changes.append(MarkNodeNotReady(node.name, node.revision, message))
    return changes
