"""The one ledger of voluntary moves (seed conflict 5): consolidation and the pressure rebalancer obey
the same cooldowns and limits, so neither can undo the other's move or thrash a replica.

* a replica placed or moved in the last REPLICA_COOLDOWN_S (its latest bind, from the store) stays;
* a node given a voluntary move in the last NODE_COOLDOWN_S, or whose heartbeat is late, gets none;
* stateful (volumes), global and pinned (``hosts``) replicas are never moved voluntarily;
* consolidation may not push a node's pressure (max of its cpu and memory EWMAs, plus the moved
  replica's footprint there) to DST_CAP or above, the rebalancer's own destination cap.

``VoluntaryMoves`` is what the control plane hands a cycle (``SchedulerConfig.voluntary_moves``): the
time, the nodes closed to moves, and the pressure EWMAs of the nodes with fresh samples. A scenario
file has none: consolidation there is KAI's alone. How consolidation checks a move against it:
``actions/move_refusal.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

REPLICA_COOLDOWN_S = 600.0  # JACO H3: a replica placed or moved in the last 10 minutes stays
NODE_COOLDOWN_S = 120.0  # JACO H3: a node given a voluntary move in the last 2 minutes gets no other
# Seed conflict 5: at most this many voluntary moves per cycle, cluster-wide (the control plane's default
# for max_consolidation_moves; the rebalancer makes at most one per cycle by its own rule).
DEFAULT_MAX_MOVES_PER_CYCLE = 1
REPLACEMENT_SUFFIX = ".next"  # a replica X being replaced (make-before-break) has X.next beside it
DST_CAP = 0.75  # JACO H3: pressure after a move on its destination stays below this
# A replica that declares no request in a resource weighs this share of any node (JACO H5).
DEFAULT_FOOTPRINT = (0.12, 0.06)


@dataclass(frozen=True, slots=True)
class VoluntaryMoves:
    now_s: float  # the cycle's time, POSIX seconds (Task.bound_at_s is on the same clock)
    closed_nodes: frozenset[str] = frozenset()  # node cooldown or a late heartbeat
    pressure: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # node -> (cpu, memory) EWMA


def moves_budget(max_consolidation_moves: int, max_moves_per_cycle: int) -> int:
    """Consolidation's moves per cycle in the control plane (the server and every replay): the
    scheduler's own budget, capped by the cluster-wide ``max_moves_per_cycle`` (seed conflict 5)."""
    return min(max_consolidation_moves, max_moves_per_cycle)


def is_pinned(hosts: Sequence[str] | None, volume_count: int) -> bool:
    """Stateful or pinned (global replicas are pinned to their host): never moved voluntarily."""
    return hosts is not None or volume_count > 0
