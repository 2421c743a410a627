"""Node health: a node whose agent has not reported within the heartbeat window (``core.heartbeat``,
90 s by default) is NotReady, from the instant the window runs out.

A heartbeat through the API sets the node Ready again. The verdict is written with the condition reason
``NotReadyAt`` (CARA G1: the NotReady time starts the node-loss clock) and audited as ``node_not_ready``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from loadmaster.controllers.changes import Change, MarkNodeNotReady
from loadmaster.controllers.views import NodeView
from loadmaster.core.heartbeat import HEARTBEAT_FRESH_FOR, is_heartbeat_fresh

NOT_READY = "NotReady"


def is_ready(node: NodeView, now: datetime, window: timedelta = HEARTBEAT_FRESH_FOR) -> bool:
    """Ready = a fresh heartbeat and no NotReady verdict written since."""
    return node.state != NOT_READY and is_heartbeat_fresh(node.last_heartbeat, now, window)


def reconcile_nodes(
    nodes: Iterable[NodeView], now: datetime, window: timedelta = HEARTBEAT_FRESH_FOR
) -> list[Change]:
    """Mark NotReady every node not already marked whose heartbeat is missing or out of the window."""
    changes: list[Change] = []
    for node in sorted(nodes, key=lambda n: n.name):
        if node.state == NOT_READY or is_heartbeat_fresh(node.last_heartbeat, now, window):
            continue
        if node.last_heartbeat is None:
            message = "no heartbeat received yet"
        else:
            silent_s = round((now - node.last_heartbeat).total_seconds(), 3)
            message = f"no heartbeat for {silent_s:g}s (NotReady after {window.total_seconds():g}s)"
        changes.append(MarkNodeNotReady(node.name, node.revision, message))
    return changes
