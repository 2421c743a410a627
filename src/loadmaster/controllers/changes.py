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
    with the next ids), and ``restart_count`` becomes ``restart_count``."""

    name: str
    revision: int
    restart_count: int
    failure: str  # degraded | exited: what the agent reported


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
    """The node-loss policy acts on a node (``controllers/node_loss.py``); ``replicas``: those it moves."""

    node: str
    revision: int
    not_ready_at: datetime
    answer: str
    probed_at: datetime
    policy: str
    replicas: tuple[str, ...]
    message: str


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
)
