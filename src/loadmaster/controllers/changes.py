"""The changes controllers ask for. The runtime turns each into store operations (CAS on revisions).

Every change that touches an existing object carries the revision it was computed from, so it lands
only if nobody changed the object meanwhile; otherwise it is dropped and the next pass recomputes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from loadmaster.controllers.rollout_plan import RolloutPlan


@dataclass(frozen=True, slots=True)
class CreateServiceReplicas:
    """New Pending replicas ``<deployment>-<service>-<index>`` for ``indices``, and the service's
    counter moved to ``next_index`` in the same transaction (so no index is ever handed out twice).
    ``spec_hash``: build them from the kept revision whose service has this hash (an aborted rollout's
    last good one) instead of the current spec (None)."""

    deployment: str
    service: str
    indices: tuple[int, ...]
    next_index: int
    spec_hash: str | None = None


@dataclass(frozen=True, slots=True)
class CreateGlobalReplica:
    """A new Pending replica ``<deployment>-<service>-<host>`` pinned to ``host``."""

    deployment: str
    service: str
    host: str


@dataclass(frozen=True, slots=True)
class CreateJobReplicas:
    """New Pending replicas ``<job>-<index>`` for the job's missing task indices."""

    job: str
    indices: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TerminateReplica:
    """A placed replica goes Terminating: its agent stops it and reports Terminated."""

    name: str
    revision: int
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class DeleteReplica:
    """A replica no agent will ever report on again (never placed, Terminated, or its node is gone)."""

    name: str
    revision: int
    reason: str
    message: str = ""


@dataclass(frozen=True, slots=True)
class ReturnToPending:
    """A placed replica whose node was deleted goes back to Pending, to be placed again (G3)."""

    name: str
    revision: int
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class MarkNodeNotReady:
    """The node's agent has not reported for too long: it stops receiving work."""

    node: str
    revision: int
    message: str


@dataclass(frozen=True, slots=True)
class UpdateRollout:
    """The deployment's ``status.rollout`` becomes ``plan``; ``events`` (rollout_started, rollout_step,
    rollout_completed, rollout_aborted) are audited in the same transaction. CAS on the deployment's
    ``revision``: an apply meanwhile makes the next pass plan again."""

    deployment: str
    revision: int
    plan: RolloutPlan
    events: tuple[str, ...]


Change = (
    CreateServiceReplicas
    | CreateGlobalReplica
    | CreateJobReplicas
    | TerminateReplica
    | DeleteReplica
    | ReturnToPending
    | MarkNodeNotReady
    | UpdateRollout
)
