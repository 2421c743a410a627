"""Replica garbage collection: records nobody will report on again, and replicas whose node is gone.

* Terminated: the agent has removed everything, so the record goes (CARA A5: "deleted shortly after").
* Terminating with no node, or on a node that no longer exists: no agent will ever confirm the stop.
* Terminating on a NotReady node: nobody can confirm the stop now, and the record must not hold its
  name (a job's task index, an evicted gang) until the node returns: it goes at once, and the agent
  stops what is no longer assigned to it when it comes back (the timeline spec's "Down hosts").
* Scheduled or Running on a node that was deleted: back to Pending, to be placed elsewhere (AVA G3:
  a deleted host's instances are rescheduled). Global replicas are left to the deployment controller,
  which drops them with their node (JACO G4).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime

from loadmaster.controllers.changes import Change, DeleteReplica, ReturnToPending
from loadmaster.controllers.views import PLACED_PHASES, TERMINATED, TERMINATING, ReplicaView


def reconcile_replicas(
    replicas: Iterable[ReplicaView],
    nodes: Collection[str],
    now: datetime,
    not_ready: Collection[str] = frozenset(),
) -> list[Change]:
    """``nodes``: the names of the nodes that exist; ``not_ready``: those of them marked NotReady."""
    changes: list[Change] = []
    for replica in sorted(replicas, key=lambda r: r.name):
        on_known_node = replica.node_ref is not None and replica.node_ref in nodes
        if replica.phase == TERMINATED:
            changes.append(DeleteReplica(replica.name, replica.revision, "Terminated"))
        elif replica.phase == TERMINATING and not on_known_node:
            changes.append(DeleteReplica(replica.name, replica.revision, "NoNodeToStopIt"))
        elif replica.phase == TERMINATING and replica.node_ref in not_ready:
            message = f"node {replica.node_ref} is NotReady; its agent stops the replica when it returns"
            changes.append(DeleteReplica(replica.name, replica.revision, "NodeNotReady", message))
        elif replica.phase in PLACED_PHASES and not on_known_node and replica.host is None:
            changes.append(
                ReturnToPending(
                    replica.name,
                    replica.revision,
                    "NodeDeleted",
                    f"node {replica.node_ref} was deleted; the replica will be placed again",
                    replica.node_ref,
                )
            )
    return changes
