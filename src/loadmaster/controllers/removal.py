"""How a controller takes a replica away: stop it through its agent, or drop a record nobody runs."""

from __future__ import annotations

from loadmaster.controllers.changes import Change, DeleteReplica, TerminateReplica
from loadmaster.controllers.views import ReplicaView


def remove(replica: ReplicaView, reason: str, message: str) -> Change:
    """A replica with a node goes Terminating (its agent stops it, then reports Terminated); one that
    was never placed has no agent to tell, so its record is deleted at once."""
    if replica.node_ref is not None:
        return TerminateReplica(replica.name, replica.revision, reason, message)
    return DeleteReplica(replica.name, replica.revision, reason)
