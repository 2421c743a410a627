"""Volume pools of nodes, flattened, and the rule that charges a task's volume claims to them.

Rule (scenario spec): a claim matches a pool whose labels contain every ``match_labels`` pair; each
claim is charged to ONE pool, the first by name among the node's matching pools with room. Claims of
one task are charged in order, so two claims may share a pool while it has room for both.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from loadmaster.core.model import Node, VolumeClaim

IntArray = npt.NDArray[np.int64]
Charges = tuple[tuple[int, int], ...]  # (pool index, bytes)


_NO_POOLS: list[int] = []  # shared by every node without pools: only ever read


class PoolIndex:
    def __init__(self, nodes: Sequence[Node]) -> None:
        self.node_pools: list[list[int]] = []
        sizes: list[int] = []
        self.labels: list[dict[str, str]] = []
        self.names: list[str] = []
        for node in nodes:
            if not node.volumes:  # most nodes: no pools
                self.node_pools.append(_NO_POOLS)
                continue
            indices = []
            for pool in sorted(node.volumes, key=lambda p: p.name):
                indices.append(len(sizes))
                sizes.append(pool.size_bytes)
                self.labels.append(dict(pool.labels))
                self.names.append(pool.name)
            self.node_pools.append(indices)
        self.size = len(sizes)
        self.pool_size = np.array(sizes, dtype=np.int64)
        self.nodes_with_pools = np.array(
            [n for n, pools in enumerate(self.node_pools) if pools], dtype=np.int64
        )

    def assign(self, pool_used: IntArray, n: int, claims: Sequence[VolumeClaim]) -> Charges | None:
        """Which pools of node ``n`` the claims would be charged to, or None if one finds no room."""
        extra: dict[int, int] = {}
        charges = []
        for claim in claims:
            for p in self.node_pools[n]:
                room = int(self.pool_size[p] - pool_used[p]) - extra.get(p, 0)
                labels = self.labels[p]
                if room >= claim.size_bytes and all(labels.get(k) == v for k, v in claim.match_labels):
                    extra[p] = extra.get(p, 0) + claim.size_bytes
                    charges.append((p, claim.size_bytes))
                    break
            else:
                return None
        return tuple(charges)

    def charge_claims(self, pool_used: IntArray, n: int, claims: Sequence[VolumeClaim]) -> Charges | None:
        charges = self.assign(pool_used, n, claims)
        if charges is not None:
            apply_charges(pool_used, charges, 1)
        return charges


def apply_charges(pool_used: IntArray, charges: Charges, sign: int) -> None:
    for p, size in charges:
        pool_used[p] += sign * size
