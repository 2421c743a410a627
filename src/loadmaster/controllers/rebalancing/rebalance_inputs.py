"""What one rebalancer cycle reads, as columns (``shared/spec/timeline-format.md``, "Pressure rebalancer").

The runtime builds these from its cache; the bench builds them at random. Nodes are sorted by name (the
tie-break order) and replicas by name. Amounts are in one unit per resource (cpu cores, memory bytes);
times are seconds on one clock (the runtime uses POSIX seconds of its clock).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

# A voluntary move's settings (JACO H3, H5, H6; seed conflict 5). Thresholds are the seeds' defaults.
HOT_PRESSURE = 0.85  # a source must be at least this hot ...
HOT_CYCLES = 2  # ... for this many consecutive cycles (the current one included)
MIN_IMBALANCE = 0.25  # max − min pressure over the nodes with data
MIN_RELIEF = 0.10  # the candidate's footprint in the source's dominant resource
DST_SUM_CAP = 1.0  # cpu + memory after the move on the destination
MOVE_COST = 0.01  # score = relief − MOVE_COST
# The cooldowns, the destination cap and the default footprint are the move ledger's, shared with
# consolidation (core/voluntary_moves.py).

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class NodeColumns:
    names: tuple[str, ...]  # sorted
    allocatable: FloatArray  # allocatable[r, n], r = cpu, memory
    requested: FloatArray  # requested[r, n]: declared requests of the replicas placed there
    sample: FloatArray  # sample[r, n]: the latest utilisation sample (0..1), nan = none
    sample_at: FloatArray  # sample_at[n], nan = no sample
    can_receive: BoolArray  # Ready, not cordoned, heartbeat not late: may be a destination
    labels: tuple[Mapping[str, str], ...] = ()  # per node, for node_selector (empty: not checked)
    # Resources besides cpu and memory (gpu, ...): what is free per node, resource -> free[n].
    other_free: Mapping[str, FloatArray] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ReplicaColumns:
    names: tuple[str, ...]
    node: IntArray  # node[t]: index into NodeColumns.names, −1 when not placed
    request: FloatArray  # request[r, t], 0 where not declared
    declared: BoolArray  # declared[r, t]
    service: IntArray  # service[t]: index into ``services``
    services: tuple[tuple[str, str], ...]  # (deployment, service) per service index
    spread: BoolArray  # spread[t]: placement=spread (no two replicas of the service on one node)
    movable: BoolArray  # movable[t]: Running, not global, no volumes, not pinned, no move in flight
    bound_at: FloatArray  # bound_at[t]: its latest bind (placement or move)
    node_selector: Mapping[int, Mapping[str, str]] = field(default_factory=dict)  # t -> selector, if any
    other_request: Mapping[int, Mapping[str, float]] = field(default_factory=dict)  # t -> {gpu: ...}, if any
