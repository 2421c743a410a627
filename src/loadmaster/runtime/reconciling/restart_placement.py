"""Where a restart happens (AVA C9): in place while the replica's node passes its filters, else elsewhere.

The restart policy (``controllers/restarts.py``) decides *that* a failing replica restarts; whether its
node still takes it is the placement engine's question, asked through ``RestartNodeCheck`` (answered by
``runtime/scheduling/restart_nodes.py``: the two loops never import each other, the control plane
joins them). A restart whose node turns it away carries the reason, and its write sends the replica
back to Pending with that node as its previous node (``replica_commands.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from loadmaster.controllers.changes import Change, RestartReplica

# Replica names about to restart -> why each one's node turns it away now (only those it does).
RestartNodeCheck = Callable[[Sequence[str]], dict[str, str]]


def restarts_where_they_may_run(changes: list[Change], check: RestartNodeCheck | None) -> list[Change]:
    """``changes`` with each restart whose node no longer passes its filters made a restart elsewhere."""
    names = [change.name for change in changes if isinstance(change, RestartReplica)]
    if not names or check is None:
        return changes
    refused = check(names)
    return [
        replace(change, node_refusal=refused[change.name])
        if isinstance(change, RestartReplica) and change.name in refused
        else change
        for change in changes
    ]
