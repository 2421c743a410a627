"""One scheduling session: the snapshot, its placement engine, the open Statement and what the
actions decided so far. Every action of a cycle runs on the same session, so later actions see what
earlier ones committed (KAI's semantics)."""

from __future__ import annotations

from dataclasses import dataclass, field

from loadmaster.core.decisions import Decision
from loadmaster.core.model import Cluster
from loadmaster.core.snapshot import ClusterSnapshot
from loadmaster.core.statement import Statement
from loadmaster.placement.engine import PlacementEngine
from loadmaster.placement.profile import profile_for


@dataclass(slots=True)
class Session:
    snapshot: ClusterSnapshot
    engine: PlacementEngine
    statement: Statement
    now_s: float = 0.0
    decisions: list[Decision] = field(default_factory=list)
    # why a task got nothing although it may have had feasible nodes (gang, quota, ...), by task index
    pending_reasons: dict[int, str] = field(default_factory=dict)

    @classmethod
    def open(cls, cluster: Cluster, now_s: float = 0.0) -> Session:
        snapshot = ClusterSnapshot(cluster)
        engine = PlacementEngine(snapshot, profile_for(cluster.config))
        return cls(snapshot, engine, Statement(snapshot), now_s)

    def commit(self) -> None:
        self.decisions.extend(self.statement.commit())
