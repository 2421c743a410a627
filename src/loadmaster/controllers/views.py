"""What controllers see of the stored objects: small immutable views, built by the runtime."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from loadmaster.controllers.deployments.rollout_plan import RolloutPlan

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
    # The restart policy's inputs (controllers/restarts.py): what the agent reported last, the restarts
    # counted since it was last healthy, the service's budget (None: the server's), and whether the agent
    # has not yet executed every command written for it.
    failure: str | None = None
    restart_count: int = 0
    restart_budget: int | None = None
    commands_pending: bool = False
    # its slot of its node's address pool (controllers/nodes/address_pools.py)
    address_slot: int | None = None

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
    node_loss_policy: str | None = None  # the service's override of the cluster's node-loss policy
    step_timeout_s: float | None = None  # its ``rollout.step_timeout`` (None: the server's)


@dataclass(frozen=True, slots=True)
class DeploymentView:
    name: str
    services: tuple[ServiceView, ...]
    timeslot_end: datetime | None = (
        None  # its time-slot's end: everything stops then (controllers/timeslots.py)
    )
    applied_revision: int | None = None  # status.applied_revision (None: stored before revisions)
    previous_revision: int | None = None
    # Each kept revision's spec hash per service (what an aborted rollout returns to).
    revision_hashes: Mapping[int, Mapping[str, str]] = field(default_factory=dict)
    rollout: RolloutPlan | None = None  # status.rollout (None: never rolled)
    revision: int = 0  # the store's mod revision: a status.rollout write is CAS on it


@dataclass(frozen=True, slots=True)
class JobView:
    name: str
    tasks: int
    spec_hash: str
    timeslot_end: datetime | None = None


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
    # Node loss (controllers/nodes/node_loss.py), all read from the stored status so a new leader resumes:
    not_ready_at: datetime | None = None  # when the NotReady verdict was written (Ready condition)
    probe: str | None = None  # the stored probe answer of this NotReady spell (host_down | agent_down)
    probed_at: datetime | None = None
    lost_at: datetime | None = None  # when the node-loss policy acted on it
    probe_address: str | None = None  # host:port of the host's probe endpoint, published by its agent
    drain: DrainView | None = None
    address_pool: int = 0  # addresses its agent's pool has (allocatable ``addresses``; 0: no pool)
