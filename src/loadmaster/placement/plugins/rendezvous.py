"""Order ``rendezvous``: highest-random-weight (rendezvous) hashing of (job, task index) over nodes.

Each feasible node gets ``h(task) xor h(node)`` through a splitmix64 finalizer; the highest wins. A
replica keeps its node when other nodes join or leave (only the replicas of a removed node move, and a
new node takes only the replicas it now wins), which is what stable ``spread`` placement needs.
Lexicographic (an order key, not a 0..100 score); vectorized over nodes with uint64 arithmetic.
"""

from __future__ import annotations

import hashlib

import numpy as np
import numpy.typing as npt

from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import BoolArray, Cols, IntArray, Scorer


def stable_hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def splitmix64(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """Bijective 64-bit mixer (Steele et al.): every input bit affects every output bit."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


class Rendezvous(Scorer):
    name, normalized, lexicographic = "rendezvous", False, True

    def applies(self, ctx: TaskContext) -> bool:
        return True

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray:
        snapshot = ctx.snapshot
        node_hash = snapshot.memo.get(("node_hash",))
        if node_hash is None:
            node_hash = np.array([stable_hash(name) for name in snapshot.node_names], dtype=np.uint64)
            snapshot.memo[("node_hash",)] = node_hash
        assert isinstance(node_hash, np.ndarray)
        task_key = np.uint64(stable_hash(ctx.task.name))
        mixed = splitmix64(node_hash[cols] ^ task_key)
        return (mixed >> np.uint64(2)).astype(np.int64)
