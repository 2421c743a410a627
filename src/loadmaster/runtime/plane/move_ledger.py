"""The leader's ledger of voluntary moves, shared by consolidation (the scheduler service) and the
pressure rebalancer (seed conflict 5; the rules are core/voluntary_moves.py).

Leader-local, like the EWMAs: a new leader starts with no node cooldowns (the replica cooldown, which
matters more, is each replica's ``status.bound_at`` in the store). The rebalancer refreshes the pressure
and the late-heartbeat nodes every cycle; both loops record the destinations of the moves they start.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from loadmaster.core.voluntary_moves import NODE_COOLDOWN_S, VoluntaryMoves


@dataclass(slots=True)
class MoveLedger:
    node_moved_at: dict[str, float] = field(default_factory=dict)  # node -> last voluntary move onto it
    pressure: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # fresh EWMAs (cpu, memory)
    late_nodes: frozenset[str] = frozenset()  # heartbeat late or not Ready: no destination

    def record(self, node: str, now_s: float) -> None:
        self.node_moved_at[node] = now_s

    def refresh(self, pressure: Mapping[str, tuple[float, float]], late_nodes: Iterable[str]) -> None:
        self.pressure = dict(pressure)
        self.late_nodes = frozenset(late_nodes)

    def view(self, now_s: float) -> VoluntaryMoves:
        """What a scheduling cycle at ``now_s`` must respect."""
        cooling = {node for node, at in self.node_moved_at.items() if now_s - at < NODE_COOLDOWN_S}
        return VoluntaryMoves(now_s, frozenset(cooling) | self.late_nodes, self.pressure)
