"""What the scheduling model keeps per replica and per node, converted once per change."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from loadmaster.core.heartbeat import HEARTBEAT_FRESH_FOR, is_heartbeat_fresh, stale_at
from loadmaster.core.model import Node, NodeState, Task
from loadmaster.manifests import task_from_replica
from loadmaster.manifests.model.task_model import is_schedulable, job_name_of
from loadmaster.manifests.replicas import ReplicaPhase
from loadmaster.manifests.timestamps import parse_timestamp
from loadmaster.runtime.plane.object_cache import Cached
from loadmaster.runtime.plane.phase_condition import phase_condition_of

_PENDING = ReplicaPhase.PENDING.value


@dataclass(frozen=True, slots=True)
class TriggerWaiver:
    """The admin trigger's waiver: every replica state written at or before ``through_revision`` is due
    for one attempt. ``round`` counts the triggers, so that a state whose waived attempt was not written
    (it failed as its record says: ``ReplicaState.spent_round``) is due again at the next trigger only."""

    through_revision: int = 0
    round: int = 0


NO_WAIVER = TriggerWaiver()


@dataclass(slots=True)
class ReplicaState:
    name: str
    revision: int
    create_revision: int
    obj: dict[str, Any]
    job_key: str
    order: tuple[int, str]  # oldest first: counter index, then name
    phase: str
    node_ref: str | None
    holds: bool  # holds a node's resources (placed, or stopping on its node)
    attempts: int
    next_attempt_at: datetime | None
    task: Task | None = None
    # Leader-local: its backoff was cut short (room that could fit it). A new state replaces this one at
    # the next write of the replica, so the waiver lasts one attempt (an attempt that writes nothing
    # clears it: SchedulingModel.spend_waivers).
    backoff_waived: bool = False
    # Leader-local: the trigger round (TriggerWaiver.round) whose waiver this state used without a write.
    spent_round: int = 0

    @property
    def pending(self) -> bool:
        return self.phase == _PENDING

    def is_due(self, now: datetime, waiver: TriggerWaiver = NO_WAIVER) -> bool:
        """Due at ``now``: no backoff, or it ended, or it was cut short: this state's own waiver, or the
        admin trigger's for every state written at or before its revision and not yet used (one
        attempt, like the flag: the attempt writes a later state, or spends the waiver)."""
        return (
            self.backoff_waived
            or (self.revision <= waiver.through_revision and self.spent_round != waiver.round)
            or self.next_attempt_at is None
            or self.next_attempt_at <= now
        )

    def is_waived_retry(self, now: datetime) -> bool:
        """Attempted although its record says it is waiting out a backoff: only a waiver made it due."""
        return self.next_attempt_at is not None and self.next_attempt_at > now

    def is_backing_off(self, now: datetime, waiver: TriggerWaiver = NO_WAIVER) -> bool:
        return self.pending and not self.is_due(now, waiver)

    def as_task(self) -> Task:
        if self.task is None:
            self.task = task_from_replica(self.obj)
        return self.task


def replica_order(name: str, spec: Mapping[str, Any]) -> tuple[int, str]:
    """A replica's place among its job's replicas, oldest first: its counter index, then its name (so a
    replacement ``X.next`` comes right after ``X``; replicas without an index, global ones, by name).
    The engine sees a job's tasks in this order, and the preview builds its jobs in the same one."""
    index = spec.get("index")
    return (index if isinstance(index, int) else -1, name)


def replica_state(cached: Cached) -> ReplicaState:
    obj = cached.obj
    spec, status = obj.get("spec", {}), obj.get("status", {})
    phase = str(status.get("phase", _PENDING))
    condition = phase_condition_of(status)
    details = condition.get("details", {}) if condition else {}
    next_attempt = details.get("next_attempt_at")
    return ReplicaState(
        name=cached.name,
        revision=cached.mod_revision,
        create_revision=cached.create_revision,
        obj=obj,
        job_key=job_name_of(spec),
        order=replica_order(cached.name, spec),
        phase=phase,
        node_ref=status.get("node_ref"),
        holds=phase != _PENDING and is_schedulable(obj),
        attempts=int(details.get("attempts", 0)) if phase == _PENDING else 0,
        next_attempt_at=parse_timestamp(next_attempt) if next_attempt else None,
    )


def lacks_holdings_record(replica: ReplicaState) -> bool:
    """Placed without the record of what it holds on its node: GPU devices it asks for, or the address
    slot ``address: true`` asks for. A scheduler bind writes both; a replica bound otherwise (a
    replacement created on a reserved node) gets them from the next cycle (cycle_writes.py)."""
    if not replica.holds or replica.phase == ReplicaPhase.TERMINATING.value or replica.node_ref is None:
        return False
    spec, status = replica.obj.get("spec", {}), replica.obj.get("status", {})
    if spec.get("address") and status.get("address_slot") is None:
        return True
    asks_gpus = spec.get("gpus") not in (None, 0, "0") or bool((spec.get("resources") or {}).get("gpu"))
    return asks_gpus and not status.get("devices")


@dataclass(slots=True)
class NodeEntry:
    shape: Node  # as stored, state always NotReady: equal shapes mean nothing a cycle sees changed
    heartbeat: datetime | None
    marked_not_ready: bool
    window: timedelta = HEARTBEAT_FRESH_FOR  # the heartbeat window (core.heartbeat)
    source: dict[str, Any] | None = None  # the stored object it was built from (to spot a bare heartbeat)
    lost: bool = False  # the node-loss policy has acted on it (status.node_loss.lost_at): stale_gangs.py
    current: Node | None = None  # the shape with the state of the last ``at``

    def stale_at(self) -> datetime | None:
        """When this node goes NotReady without any event (its heartbeat ages out); None if it already is
        NotReady for good (marked, or never heard from). Fresh while ``now < stale_at``."""
        if self.marked_not_ready:
            return None
        return stale_at(self.heartbeat, self.window)

    def at(self, now: datetime) -> Node:
        """The node with its state as of ``now`` (a heartbeat ages out without any event)."""
        fresh = not self.marked_not_ready and is_heartbeat_fresh(self.heartbeat, now, self.window)
        state: NodeState = "Ready" if fresh else "NotReady"
        if self.current is None or self.current.state != state:
            self.current = dataclasses.replace(self.shape, state=state)
        return self.current
