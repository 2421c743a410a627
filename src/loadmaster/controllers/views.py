"""What controllers see of the stored objects: small immutable views, built by the runtime."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

# Replica phases, as stored (manifests.ReplicaPhase values; repeated here because controllers and
# manifests are independent layers).
PENDING = "Pending"
SCHEDULED = "Scheduled"
RUNNING = "Running"
FAILED = "Failed"
TERMINATING = "Terminating"
TERMINATED = "Terminated"
SUCCEEDED = "Succeeded"

# A replica in one of these phases no longer fills a slot of its service or job: it is going away.
LEAVING_PHASES = frozenset({TERMINATING, TERMINATED})
# A replica in one of these phases holds a node (the agent may be running it).
PLACED_PHASES = frozenset({SCHEDULED, RUNNING})

DEPLOYMENT = "Deployment"
JOB = "Job"


@dataclass(frozen=True, slots=True)
class ReplicaView:
    name: str
    owner_kind: str  # DEPLOYMENT | JOB
    owner: str
    service: str | None  # deployments only
    index: int | None  # absent for global replicas
    host: str | None  # global replicas only
    spec_hash: str
    phase: str
    node_ref: str | None
    revision: int  # the store's mod revision: every change to this replica is CAS on it
    incarnation: str = ""  # unique per incarnation; what agents key running work by
    replaces: str | None = None  # a replacement (``<X>.next``): the replica X it replaces
    replacement_reason: str | None = None  # drain | rollout | rebalance | consolidate
    replacement_deadline: datetime | None = None  # a replacement not Running by then is given up
    healthy: bool = True  # the agent's latest health verdict (Running and not reported degraded)
    phase_reason: str | None = None  # of its Phase condition: why it is in its phase (Unschedulable ...)

    @property
    def is_leaving(self) -> bool:
        return self.phase in LEAVING_PHASES

    @property
    def is_replacement(self) -> bool:
        """A make-before-break replacement: it fills its replica's slot, never a slot of its own."""
        return self.replaces is not None


@dataclass(frozen=True, slots=True)
class ServiceView:
    name: str
    placement: str  # spread | pack | hosts | global
    replicas: int  # ignored for global
    spec_hash: str  # of the service spec as the replicas would carry it


@dataclass(frozen=True, slots=True)
class DeploymentView:
    name: str
    services: tuple[ServiceView, ...]


@dataclass(frozen=True, slots=True)
class JobView:
    name: str
    tasks: int
    spec_hash: str


DRAINING = "draining"
DRAIN_TIMED_OUT = "timed_out"


@dataclass(frozen=True, slots=True)
class DrainView:
    """A graceful removal of the node (``status.drain``): in progress, or given up at its deadline."""

    state: str  # DRAINING | DRAIN_TIMED_OUT
    started_at: datetime
    deadline: datetime
    message: str = ""  # of the node's Drain condition


@dataclass(frozen=True, slots=True)
class NodeView:
    name: str
    state: str | None  # status.state as stored (None before the first heartbeat)
    last_heartbeat: datetime | None
    unschedulable: bool
    revision: int
    drain: DrainView | None = None
