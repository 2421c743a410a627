"""A node's address pool shrank under its replicas: those left without an address are Failed.

A replica with ``address: true`` holds slot k of its node's pool (``status.address_slot``, given at its
bind); the pool's size is the node's allocatable ``addresses``, which its agent registers from
``--address-pool``. The scheduler never binds more replicas than the pool has, so a slot past the end
only happens when the pool shrinks under running work (an agent restarted with a smaller pool, or none):
every placed replica with ``slot >= size`` is Failed at once with reason ``subnet_pool_exhausted``
(JACO A9: published directly, never restarted; a Failed replica keeps its slot of its service until its
deployment changes, as after ``restart_exhausted``). The timeline's simulated agents re-register
through the same request, so this one rule serves both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from loadmaster.controllers.changes import Change, FailReplica
from loadmaster.controllers.views import PLACED_PHASES, ReplicaView

SUBNET_POOL_EXHAUSTED = "subnet_pool_exhausted"


def reconcile_address_pools(replicas: Iterable[ReplicaView], pool_sizes: Mapping[str, int]) -> list[Change]:
    """A Failed mark for every placed replica whose address slot lies past its node's pool
    (``pool_sizes``: node -> addresses; a node absent from it is gone, which node loss handles)."""
    changes: list[Change] = []
    for replica in sorted(replicas, key=lambda r: r.name):
        slot, node = replica.address_slot, replica.node_ref
        if slot is None or node is None or replica.phase not in PLACED_PHASES or node not in pool_sizes:
            continue
        size = pool_sizes[node]
        if slot >= size:
            message = (
                f"node {node}'s address pool shrank to {size} address{'es' if size != 1 else ''}: "
                f"its address (slot {slot}) is gone"
            )
            changes.append(FailReplica(replica.name, replica.revision, SUBNET_POOL_EXHAUSTED, message))
    return changes
