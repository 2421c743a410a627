"""The changes controllers ask for. The runtime turns each into store operations (CAS on revisions).

Every change that touches an existing object carries the revision it was computed from, so it lands
only if nobody changed the object meanwhile; otherwise it is dropped and the next pass recomputes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class CreateServiceReplicas:
    """New Pending replicas ``<deployment>-<service>-<index>`` for ``indices``, and the service's
    counter moved to ``next_index`` in the same transaction (so no index is ever handed out twice)."""

    deployment: str
    service: str
    indices: tuple[int, ...]
    next_index: int


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


Change = (
    CreateServiceReplicas
    | CreateGlobalReplica
    | CreateJobReplicas
    | TerminateReplica
    | DeleteReplica
    | ReturnToPending
    | MarkNodeNotReady
    | StartReplacement
    | CompleteReplacement
    | AbortReplacement
    | CompleteDrain
    | TimeOutDrain
    | NoteDrainBlocked
)
