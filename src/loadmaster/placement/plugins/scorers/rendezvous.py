"""Rendezvous (highest-random-weight) hashing of (task, node): the tie-break of ``service_spread``.

Each node gets ``splitmix64(h(task) xor h(node))``; the highest wins. Since a node's weight depends on
that node and the task alone, a task keeps its winner when other nodes join or leave (only a node that
now wins takes it), which is what stable ``spread`` placement needs. Vectorized over nodes in uint64.
"""

from __future__ import annotations

import hashlib

import numpy as np
import numpy.typing as npt

from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import Cols

UIntArray = npt.NDArray[np.uint64]


def stable_hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def splitmix64(x: UIntArray) -> UIntArray:
    """Bijective 64-bit mixer (Steele et al.): every input bit affects every output bit."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def rendezvous_hash(ctx: TaskContext, cols: Cols) -> UIntArray:
    """The 64-bit weight of the task at hand on each node of ``cols`` (node hashes once per snapshot)."""
    snapshot = ctx.snapshot
    node_hash = snapshot.memo.get(("node_hash",))
    if node_hash is None:
        node_hash = np.array([stable_hash(name) for name in snapshot.node_names], dtype=np.uint64)
        snapshot.memo[("node_hash",)] = node_hash
    assert isinstance(node_hash, np.ndarray)
    return splitmix64(node_hash[cols] ^ np.uint64(stable_hash(ctx.task.name)))
