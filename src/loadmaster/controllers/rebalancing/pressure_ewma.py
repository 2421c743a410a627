"""Per-node pressure EWMAs: the rebalancer's leader-local memory (JACO H2, H6).

Each node keeps one exponentially weighted moving average per resource (cpu, memory) over continuous
time with a 5-minute time constant: the first sample sets it; a sample Δt after the last one gives

    ewma += (1 − e^(−Δt / 300 s)) · (x − ewma)

Pressure is max(cpu_ewma, memory_ewma). The state also counts, per node, the consecutive rebalancer
cycles at which the node was hot, and remembers when each node last received a voluntary move (the node
cooldown). None of it is stored: a new leader starts empty and rebuilds it from fresh samples within two
cycles (the replica cooldown, which must survive a failover, is read from the store instead).

Arrays are indexed like ``nodes`` (one name per slot); a call with another set of names re-indexes
once (nodes join and leave rarely), so a cycle over 5,000 nodes is a handful of vector operations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

# JACO H2: a 5-minute continuous-time window.
TIME_CONSTANT_S = 300.0
CPU, MEMORY = 0, 1
RESOURCES = ("cpu", "memory")

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(slots=True)
class PressureState:
    """What the leader remembers between rebalancer cycles (lost on failover, by design)."""

    nodes: tuple[str, ...] = ()
    ewma: FloatArray = field(default_factory=lambda: np.full((2, 0), np.nan))  # ewma[r, n]; nan = no sample
    ewma_at: FloatArray = field(default_factory=lambda: np.full(0, np.nan))  # time of the last folded sample
    hot_cycles: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))  # consecutive hot cycles
    node_moved_at: dict[str, float] = field(default_factory=dict)  # last voluntary move onto the node
    last_cycle_at: float | None = None
    position: dict[str, int] = field(default_factory=dict)  # node name -> its slot

    def __post_init__(self) -> None:
        if len(self.position) != len(self.nodes):
            self.position = {name: i for i, name in enumerate(self.nodes)}

    def aligned(self, nodes: tuple[str, ...]) -> PressureState:
        """This state indexed like ``nodes``: known nodes keep their values, new ones start empty."""
        if nodes == self.nodes:
            return self
        count = len(nodes)
        ewma = np.full((2, count), np.nan)
        ewma_at = np.full(count, np.nan)
        hot = np.zeros(count, np.int64)
        old = np.array([self.position.get(name, -1) for name in nodes], dtype=np.int64)
        kept = old >= 0
        ewma[:, kept] = self.ewma[:, old[kept]]
        ewma_at[kept] = self.ewma_at[old[kept]]
        hot[kept] = self.hot_cycles[old[kept]]
        # The node cooldowns are the same map, not a copy: the runtime shares it with consolidation.
        return PressureState(nodes, ewma, ewma_at, hot, self.node_moved_at, self.last_cycle_at)


def fold_samples(state: PressureState, sample: FloatArray, sample_at: FloatArray) -> None:
    """Fold each node's latest sample (``sample[r, n]`` taken at ``sample_at[n]``; nan = none) into the
    EWMAs, in place. A sample already folded (not newer than the EWMA) changes nothing, so folding the
    same sample again, or each sample as it arrives and then once more at the cycle, is harmless."""
    has_sample = ~np.isnan(sample_at)
    first = has_sample & np.isnan(state.ewma_at)
    newer = has_sample & ~first & (sample_at > np.nan_to_num(state.ewma_at, nan=np.inf))
    state.ewma[:, first] = sample[:, first]
    if newer.any():
        dt = sample_at[newer] - state.ewma_at[newer]
        weight = 1.0 - np.exp(-dt / TIME_CONSTANT_S)
        state.ewma[:, newer] += weight * (sample[:, newer] - state.ewma[:, newer])
    state.ewma_at[first | newer] = sample_at[first | newer]


def fold_one(state: PressureState, node: str, cpu: float, memory: float, at: float) -> None:
    """Fold one sample as it arrives (the runtime calls this for every sample a node reports, so no
    sample between two cycles is lost). Unknown nodes are ignored until the next cycle aligns them."""
    i = state.position.get(node)
    if i is None:
        return
    last = float(state.ewma_at[i])
    if np.isnan(last):
        state.ewma[:, i] = (cpu, memory)
    elif at > last:
        weight = 1.0 - math.exp(-(at - last) / TIME_CONSTANT_S)
        state.ewma[CPU, i] += weight * (cpu - state.ewma[CPU, i])
        state.ewma[MEMORY, i] += weight * (memory - state.ewma[MEMORY, i])
    else:
        return
    state.ewma_at[i] = at


def pressure_of(state: PressureState) -> FloatArray:
    """pressure[n] = max(cpu_ewma, memory_ewma); nan where the node has no sample."""
    return np.fmax(state.ewma[CPU], state.ewma[MEMORY]) if state.nodes else np.zeros(0)
