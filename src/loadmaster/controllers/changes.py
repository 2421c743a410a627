"""The changes controllers ask for. The runtime turns each into store operations (CAS on revisions).

Every change that touches an existing object carries the revision it was computed from, so it lands
only if nobody changed the object meanwhile; otherwise it is dropped and the next pass recomputes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from loadmaster.controllers.deployments.rollout_plan import RolloutPlan


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
    """A placed replica goes back to Pending, to be placed again elsewhere: its node was deleted (G3) or
    lost (node_loss.py). ``node``: the node it leaves; ``inactive_since``: since when it has not run
    there (a lost node's NotReady instant; None: now), which a stale gang is timed from."""

    name: str
    revision: int
    reason: str
    message: str
    node: str | None = None
    inactive_since: datetime | None = None


@dataclass(frozen=True, slots=True)
class RestartReplica:
    """A failing replica's agent is told ``remove_from_routing`` then ``restart`` (two replica commands
    with the next ids), and ``restart_count`` becomes ``restart_count``. With ``node_refusal`` (why its
    node no longer passes its filters, AVA C9) it is restarted elsewhere instead: back to Pending with
    its node as its previous node, for the scheduler to place."""

    name: str
    revision: int
    restart_count: int
    failure: str  # degraded | exited: what the agent reported
    node_refusal: str | None = None


@dataclass(frozen=True, slots=True)
class FailReplica:
    """A replica that failed again after using its whole restart budget: Failed, and left alone."""

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
class RecordNodeProbe:
    """The host of a NotReady node answered its probe but its agent is silent: stored, so the extra wait
    (``agent_down_wait``) is counted from ``probed_at`` by whichever leader is in office."""

    node: str
    revision: int
    answer: str
    probed_at: datetime


@dataclass(frozen=True, slots=True)
class MarkNodeLost:
    """The node-loss policy acts on a node (``controllers/nodes/node_loss.py``); ``replicas``: those it
    moves."""

    node: str
    revision: int
    not_ready_at: datetime
    answer: str
    probed_at: datetime
    policy: str
    replicas: tuple[str, ...]
    message: str


@dataclass(frozen=True, slots=True)
class StartReplacement:
    """Make-before-break, step one: a replacement of replica ``replica`` stored as ``<replica>.next``.

    It copies ``replica``'s spec (or, with ``spec_hash``, its owner's current spec: a rollout), gets a new
    incarnation, ``spec.replaces``, the ``reason`` (drain / rollout / rebalance / consolidate),
    ``avoid_nodes`` and the ``deadline`` by which it must run. With ``node`` it is created bound to that
    reserved destination (Scheduled); without, Pending, for the scheduler to place by its normal rules.
    ``revision``: ``replica``'s, as the change was computed from it (the replacement is created only if
    the replica is still that one)."""

    replica: str
    revision: int
    reason: str
    spec_hash: str | None = None
    node: str | None = None
    avoid_nodes: tuple[str, ...] = ()
    deadline: datetime | None = None


@dataclass(frozen=True, slots=True)
class CompleteReplacement:
    """The replacement runs: ONE transaction deletes the old incarnation and moves ``<replica>.next``'s
    object to the key ``replica`` (same incarnation, same status). The old one's agent sees its
    incarnation unassigned and stops it; the new one's agent adopts it under the new key."""

    replica: str
    revision: int  # the old replica's
    replacement_revision: int
    reason: str  # why the replacement was started
    src: str | None = None  # the node the old incarnation ran on
    dst: str | None = None  # the node the new one runs on


@dataclass(frozen=True, slots=True)
class AbortReplacement:
    """The replacement is given up (its deadline passed, or the old replica is going away): its record
    is removed (its agent stops it if it started), the old replica keeps running."""

    replica: str  # the replaced one; the record removed is ``<replica>.next``
    replacement_revision: int
    reason: str  # why it is given up (drain_timeout, step_timeout, replaced_gone ...)
    message: str = ""


@dataclass(frozen=True, slots=True)
class CompleteDrain:
    """Every replica has left the drained node: the Node object is deleted (its removal ends)."""

    node: str
    revision: int


@dataclass(frozen=True, slots=True)
class TimeOutDrain:
    """The drain's deadline passed with ``not_moved`` still on the node: it stays, cordoned, with a
    ``drain_timeout`` condition; its remaining replicas keep running."""

    node: str
    revision: int
    not_moved: tuple[str, ...]
    message: str


@dataclass(frozen=True, slots=True)
class NoteDrainBlocked:
    """Replicas on a draining node whose replacement cannot be placed: the node's Drain condition names
    them (they keep running there until they move or the drain times out)."""

    node: str
    revision: int
    blocked: tuple[str, ...]
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
    | RestartReplica
    | FailReplica
    | MarkNodeNotReady
    | RecordNodeProbe
    | MarkNodeLost
    | StartReplacement
    | CompleteReplacement
    | AbortReplacement
    | CompleteDrain
    | TimeOutDrain
    | NoteDrainBlocked
    | UpdateRollout
)
