"""What ``status`` shows, kept current: nodes and replicas by name (updated per watch event), the server's
info, and the latest audit entries. Pure: the command fetches, this only holds and counts."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from loadmaster.cli.views.columns import name_of, spec_of, status_of
from loadmaster.cli.views.usage import replica_phase
from loadmaster.manifests import DEPLOYMENT, NODE, REPLICA, ManifestError, ReplicaPhase, normalize_kind

RECENT_ENTRIES = 8
# Phases listed in this order in the summary line: where replicas are headed, then where they ended.
PHASE_ORDER = tuple(phase.value for phase in ReplicaPhase)


@dataclass(slots=True)
class ClusterStatus:
    server: str
    info: dict[str, Any] = field(default_factory=dict)
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    replicas: dict[str, dict[str, Any]] = field(default_factory=dict)
    recent: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=RECENT_ENTRIES))
    revision: int = 0
    deployments: dict[str, dict[str, Any]] = field(default_factory=dict)  # for their rollouts

    def relist(
        self, nodes: Iterable[dict[str, Any]], replicas: Iterable[dict[str, Any]], revision: int
    ) -> None:
        self.nodes = {name_of(node): node for node in nodes}
        self.replicas = {name_of(replica): replica for replica in replicas}
        self.revision = revision

    def apply_event(self, event: str, data: Mapping[str, Any]) -> None:
        """One watch event (``put`` or ``delete`` of a node or replica); other kinds are not shown here."""
        revision = data.get("revision")
        if isinstance(revision, int):
            self.revision = max(self.revision, revision)
        try:
            kind = normalize_kind(data.get("kind"))
        except ManifestError:
            return
        table = {NODE: self.nodes, REPLICA: self.replicas, DEPLOYMENT: self.deployments}.get(kind)
        if table is None:
            return
        name = str(data.get("name") or name_of(data.get("object") or {}))
        if event == "delete":
            table.pop(name, None)
        elif event == "put" and isinstance(data.get("object"), dict):
            table[name] = data["object"]

    def add_entries(self, entries: Iterable[dict[str, Any]]) -> None:
        self.recent.extend(entries)

    @property
    def last_seq(self) -> int | None:
        return int(self.recent[-1]["seq"]) if self.recent and "seq" in self.recent[-1] else None

    def ready_nodes(self) -> int:
        return sum(1 for node in self.nodes.values() if status_of(node).get("state") == "Ready")

    def cordoned_nodes(self) -> int:
        return sum(1 for node in self.nodes.values() if spec_of(node).get("unschedulable"))

    def phases(self) -> list[tuple[str, int]]:
        counts = Counter(replica_phase(replica) for replica in self.replicas.values())
        known = [(phase, counts[phase]) for phase in PHASE_ORDER if counts[phase]]
        others = sorted((phase, count) for phase, count in counts.items() if phase not in PHASE_ORDER)
        return known + others

    def pending(self) -> list[dict[str, Any]]:
        return [
            replica
            for _, replica in sorted(self.replicas.items())
            if replica_phase(replica) == ReplicaPhase.PENDING.value
        ]

    def rollouts(self) -> list[tuple[str, dict[str, Any]]]:
        """Deployments whose latest rollout is in progress or aborted (completed ones need no attention)."""
        shown = []
        for name, deployment in sorted(self.deployments.items()):
            rollout = status_of(deployment).get("rollout")
            if isinstance(rollout, dict) and rollout.get("state") in ("in_progress", "aborted"):
                shown.append((name, rollout))
        return shown
