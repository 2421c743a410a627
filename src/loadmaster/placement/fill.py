"""The fill path: where the engine's argmax would put each of k identical tasks, in one vector pass.

With local plugins (a placement on node n changes only node n) and identical tasks, node n's total
after j more copies on it is a fixed sequence ``S[n, j]`` for ``j < cap[n]`` (the copies that fit).
Placing the tasks one at a time picks, at every step, the node whose current value ``S[n, j_n]`` is
largest (the first node on ties), then advances that node to ``j_n + 1``. Facts that make this cheap:

1. Only the first k nodes in the order ``(-S[n, 0], n)`` can ever be picked: a node's first pick
   happens while every node not yet picked still shows ``S[., 0]``, so first picks follow that order.
2. If every sequence is non-decreasing (binpack), a picked node stays the best until it is full:
   the picks are those nodes, in that order, each ``cap[n]`` times.
3. If every sequence is non-increasing (spread, least-allocated), each node's current value is its
   best remaining one, so the picks are all pairs sorted by ``(-S[n, j], n, j)``.
4. Otherwise a heap of the current values replays the argmax exactly.

The result is the same sequence of nodes as one ``choose`` per task (a property test checks this).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np

from loadmaster.placement.context import TaskContext
from loadmaster.placement.extension_points import CopiesFilter, CopiesScorer, IntArray

# Bound on the (node, copies) pairs scored at once (a few arrays of this many int64/float64): a longer
# run is filled in chunks, each starting from the state the previous one left.
MAX_PAIRS = 1 << 20


def first_in_order(masked: IntArray, k: int, infeasible: int) -> IntArray:
    """The first k feasible nodes in the order (-masked[n], n) (fact 1)."""
    feasible = np.flatnonzero(masked != infeasible)
    if feasible.size > k:
        values = masked[feasible]
        kth = int(np.partition(values, feasible.size - k)[feasible.size - k])  # the k-th largest
        above = feasible[values > kth]
        feasible = np.concatenate((above, feasible[values == kth][: k - above.size]))
    return feasible[np.lexsort((feasible, -masked[feasible]))]


def fill_nodes(
    ctx: TaskContext,
    masked: IntArray,
    k: int,
    infeasible: int,
    capacity: Sequence[CopiesFilter],
    scorers: Sequence[tuple[CopiesScorer, int]],
    denominator: int,
) -> tuple[IntArray, bool]:
    """The nodes the next tasks (at most k) go to, and whether no further copy fits anywhere (True:
    fewer nodes than asked). A long run may be cut into chunks (``MAX_PAIRS``): then fewer than k nodes
    come back with False, and the caller asks again, from the new state, for the rest.

    ``masked``: every node's current total, ``infeasible`` where the task does not fit."""
    while True:
        candidates = first_in_order(masked, k, infeasible)
        cap = np.full(candidates.size, k, dtype=np.int64)
        for f in capacity:
            cap = np.minimum(cap, f.copies_that_fit(ctx, candidates))
        if int(cap.sum()) <= MAX_PAIRS or k == 1:
            break
        k //= 2
    pairs = int(cap.sum())
    node = np.repeat(candidates, cap)
    copies = np.arange(pairs, dtype=np.int64) - np.repeat(np.cumsum(cap) - cap, cap)
    total = np.zeros(pairs, dtype=np.int64)
    for scorer, weight in scorers:
        total += weight * scorer.score_copies(ctx, node, copies)
    if denominator != 1:
        total //= denominator
    chosen = _replay(node, copies, total, k)
    # Fewer picks than k (after any chunking) means fewer pairs than k: every feasible node was a
    # candidate (each has cap >= 1) and all of them are now full.
    return chosen, chosen.size < k


def _replay(node: IntArray, copies: IntArray, total: IntArray, k: int) -> IntArray:
    """The argmax sequence over the pairs (laid out node by node in first-pick order, copies rising)."""
    steps = total[1:] - total[:-1]
    same_node = copies[1:] > 0
    if (steps[same_node] >= 0).all():  # fact 2: the layout order is the pick order
        return node[:k]
    if (steps[same_node] <= 0).all():  # fact 3
        order = np.lexsort((copies, node, -total))
        return node[order[:k]]
    return _replay_with_heap(node, copies, total, k)


def _replay_with_heap(node: IntArray, copies: IntArray, total: IntArray, k: int) -> IntArray:
    nodes, values, size = node.tolist(), total.tolist(), node.size
    heap = [(-values[i], nodes[i], i) for i in np.flatnonzero(copies == 0).tolist()]
    heapq.heapify(heap)
    chosen: list[int] = []
    while heap and len(chosen) < k:
        _, n, i = heapq.heappop(heap)
        chosen.append(n)
        if i + 1 < size and nodes[i + 1] == n:  # the node's next copy is now its current value
            heapq.heappush(heap, (-values[i + 1], n, i + 1))
    return np.array(chosen, dtype=np.int64)
