"""Which slot of its node's address pool a replica with ``address: true`` gets at its bind.

The scheduler counts a pool as the node resource ``addresses`` (one per such replica), so a bind never
takes more addresses than the pool has; which one is this module's: the lowest slot no replica holding
resources on the node holds (slot k is the pool's k-th address, which the node's agent exports as
``LOADMASTER_REPLICA_ADDRESS``; docs/addresses.md). The slot is kept in ``status.address_slot`` for the
replica's life on the node, so it is the same after an agent restart, and a pool that shrinks under it
is seen by the server (controllers/nodes/address_pools.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from loadmaster.runtime.scheduling.model.model_entries import ReplicaState


class AddressSlots:
    """The slots held per node, worked out on the first bind that needs one (a walk over the replicas)."""

    def __init__(self, replicas: Mapping[str, ReplicaState]) -> None:
        self._replicas = replicas
        self._held: dict[str, set[int]] | None = None

    def take(self, node: str) -> int:
        """The lowest slot of ``node`` nobody holds; held from now on (several binds in one cycle)."""
        if self._held is None:
            self._held = {}
            for replica in self._replicas.values():
                slot = replica.obj.get("status", {}).get("address_slot")
                if replica.holds and replica.node_ref is not None and isinstance(slot, int):
                    self._held.setdefault(replica.node_ref, set()).add(slot)
        held = self._held.setdefault(node, set())
        slot = next(k for k in range(len(held) + 1) if k not in held)
        held.add(slot)
        return slot
