"""A cycle's plan -> replica updates, grouped for batched fenced transactions.

* bind: Pending -> Scheduled with ``status.node_ref`` (and ``status.devices``, the GPU devices it was
  given there, for the agent to expose to the process, and with ``address: true`` its ``address_slot``:
  address_slots.py);
* pipeline: stays Pending, condition ``Pipelined`` naming the node (bound by a later cycle, once the
  resources being released there are free: the agent never starts a replica onto busy resources);
* record: a replica placed without a bind (a replacement on a reserved node) gets its devices and
  address slot as the cycle's state has them;
* evict: Scheduled/Running -> Terminating with the decision's reason (and an audit entry);
* move: Terminating too; its owner's controller creates the replacement, which a later cycle places;
* a Pending replica the cycle could not place: attempt + 1, a Phase condition with the explanation,
  and from the 4th failed attempt a backoff (``next_attempt_at``, retry_policy.py), each backoff with a
  ``placement_backoff`` audit entry (attempts, next attempt, reason): the cadence is on the record;
* kept: a replica attempted only because its backoff was cut short (the admin trigger, room that could
  fit it) that failed with the condition it has already (apart from the attempt count, the next
  attempt, the time and the sample of a few nodes' reasons) is not written: it keeps its attempts and
  next attempt (docs/decisions.md, busy3).

Every update is a put with CAS on the revision the cycle read, so a replica changed meanwhile (deleted,
re-applied) is left alone and looked at again next cycle.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from loadmaster.core.model import DEFAULT_QUEUE, Node
from loadmaster.core.working.decisions import Decision
from loadmaster.cycle import ACTIONS, CyclePlan
from loadmaster.manifests.replicas import ReplicaPhase
from loadmaster.manifests.timestamps import format_timestamp, parse_timestamp
from loadmaster.placement.diagnosis import Explanation
from loadmaster.runtime.plane.audit import AuditEntry
from loadmaster.runtime.plane.phase_condition import (
    explanation_details,
    explanation_message,
    phase_condition,
    phase_condition_of,
    with_phase_condition,
)
from loadmaster.runtime.plane.stop_orders import stop_order
from loadmaster.runtime.plane.storage.store_layout import encode_object, object_key
from loadmaster.runtime.scheduling.address_slots import AddressSlots
from loadmaster.runtime.scheduling.model.built_jobs import BlockedReplica
from loadmaster.runtime.scheduling.model.model_entries import ReplicaState
from loadmaster.runtime.scheduling.model.scheduling_model import ClusterBuild
from loadmaster.runtime.scheduling.retry_policy import enters_backoff, is_backoff, next_attempt_after
from loadmaster.runtime.scheduling.scale_up.scale_up_verdict import is_unplaceable
from loadmaster.store.interface import Put

HOST_PLACEMENT_REASON = "cannot_satisfy_host_placement"
# The first word of the reasons allocate gives (actions/allocate.py) -> their failure label.
REASON_LABELS = {"queue": "queue_limit", "gang": "gang"}


@dataclass(slots=True)
class ReplicaUpdate:
    name: str
    put: Put
    kind: str  # bind | pipeline | evict | move | wait | record
    node: str | None = None
    audit: AuditEntry | None = None  # recorded in the same transaction (evictions)
    created_at: datetime | None = None  # binds: for the pending -> scheduled histogram
    failure: str | None = None  # waits: the reason label of loadmaster_failures_total
    backoff: bool = False
    entered_backoff: bool = False  # this wait starts the backoff: logged once at error level
    message: str = ""  # waits: the condition's message


@dataclass(slots=True)
class KeptRetry:
    """A waived retry that failed as the replica's record says: nothing is written (module doc)."""

    replica: ReplicaState
    failure: str | None  # the reason label of loadmaster_failures_total


@dataclass(slots=True)
class CycleWrites:
    updates: list[ReplicaUpdate] = field(default_factory=list)
    unplaceable: list[ReplicaState] = field(default_factory=list)  # nothing fits anywhere: scale-up material
    kept: list[KeptRetry] = field(default_factory=list)  # waived retries that wrote nothing

    def add(self, outcome: ReplicaUpdate | KeptRetry) -> None:
        if isinstance(outcome, KeptRetry):
            self.kept.append(outcome)
        else:
            self.updates.append(outcome)

    def count(self) -> Counter[str]:
        return Counter(update.kind for update in self.updates)


def _put(replica: ReplicaState, status: dict[str, Any]) -> Put:
    obj = {**replica.obj, "status": status}
    return Put(object_key("Replica", replica.name), encode_object(obj), expect_revision=replica.revision)


def plan_writes(plan: CyclePlan, build: ClusterBuild, now: datetime) -> CycleWrites:
    writes = CycleWrites()
    decided: set[str] = set()
    slots = AddressSlots(build.replicas)
    for decision in plan.decisions:
        replica = build.replicas.get(decision.task)
        if replica is None:
            continue
        decided.add(decision.task)
        writes.updates.append(_decision_update(replica, decision, now, plan, slots))
    for replica in build.unrecorded:
        if replica.name not in decided and replica.name in plan.tasks:
            update = _record_update(replica, plan.tasks[replica.name].devices, slots)
            if update is not None:
                writes.updates.append(update)
    node_count = len(build.nodes)
    texts = ExplanationTexts(node_count)
    for replica in build.attempted:
        if replica.name in decided:
            continue
        explanation = plan.explanations.get(replica.name) or Explanation()
        writes.add(_wait_update(replica, explanation, build.nodes, texts, now))
        if is_unplaceable(explanation, node_count, replica.obj.get("spec", {}).get("placement")):
            writes.unplaceable.append(replica)
    for blocked in build.blocked:
        writes.add(_blocked_update(blocked, now))
    return writes


def _record_holdings(
    status: dict[str, Any], replica: ReplicaState, node: str, devices: tuple[int, ...], slots: AddressSlots
) -> None:
    """What a bind gives the replica besides its node: its GPU devices (``status.devices``, which the
    next cycles keep and the agent hands to the process) and, with ``address: true``, an address slot."""
    for held in ("devices", "address_slot", "address"):
        status.pop(held, None)
    if devices:
        status["devices"] = list(devices)
    if replica.obj.get("spec", {}).get("address"):
        status["address_slot"] = slots.take(node)


def _record_update(
    replica: ReplicaState, devices: tuple[int, ...], slots: AddressSlots
) -> ReplicaUpdate | None:
    """The devices and address slot of a replica placed without them (not by a scheduler bind), as
    this cycle's state has them; None when there is nothing to add."""
    status = dict(replica.obj.get("status", {}))
    before = dict(status)
    if devices and not status.get("devices"):
        status["devices"] = list(devices)
    if replica.obj.get("spec", {}).get("address") and status.get("address_slot") is None:
        status["address_slot"] = slots.take(str(replica.node_ref))
    if status == before:
        return None
    return ReplicaUpdate(replica.name, _put(replica, status), "record", replica.node_ref)


def _decision_update(
    replica: ReplicaState, decision: Decision, now: datetime, plan: CyclePlan, slots: AddressSlots
) -> ReplicaUpdate:
    status = dict(replica.obj.get("status", {}))
    node = decision.node
    if decision.kind == "bind":
        attempts = replica.attempts + 1
        status.pop("inactive_since", None)
        status.update(phase=ReplicaPhase.SCHEDULED.value, node_ref=node, bound_at=format_timestamp(now))
        _record_holdings(status, replica, node, plan.tasks[decision.task].devices, slots)
        message = f"placed on {node} by {decision.action} (attempt {attempts})"
        condition = phase_condition(True, "Scheduled", message, now, {"attempts": attempts, "node": node})
        status["conditions"] = with_phase_condition(status, condition)
        created = replica.obj.get("metadata", {}).get("created_at")
        return ReplicaUpdate(
            replica.name,
            _put(replica, status),
            "bind",
            node,
            created_at=parse_timestamp(created) if created else None,
        )
    if decision.kind == "pipeline":
        message = f"will be bound to {node} once the resources being released there are free"
        details = {"attempts": replica.attempts, "node": node}
        status["conditions"] = with_phase_condition(
            status, phase_condition(False, "Pipelined", message, now, details)
        )
        return ReplicaUpdate(replica.name, _put(replica, status), "pipeline", node)
    reason = "Evicted" if decision.kind == "evict" else "Moved"
    if decision.kind == "evict":
        message = f"evicted from {node} by {decision.action}" + (
            f": {decision.reason}" if decision.reason else ""
        )
    else:
        message = f"moving from {decision.from_node} to {node} by {decision.action}" + (
            f": {decision.reason}" if decision.reason else ""
        )
    status["phase"] = ReplicaPhase.TERMINATING.value
    status["stop"] = stop_order(replica.obj.get("spec", {}))
    status["conditions"] = with_phase_condition(status, phase_condition(False, reason, message, now))
    audit = AuditEntry(
        decision.kind,
        "scheduler",
        f"replicas/{replica.name}",
        message,
        # the victim's queue: ``describe queue`` shows its last reclaim from these
        {
            "action": decision.action,
            "node": replica.node_ref,
            "target": node,
            "queue": replica.obj.get("spec", {}).get("queue", DEFAULT_QUEUE),
        },
    )
    return ReplicaUpdate(replica.name, _put(replica, status), decision.kind, node, audit=audit)


def _with_attempts(
    details: dict[str, Any], message: str, attempts: int, next_attempt_at: str | None
) -> tuple[dict[str, Any], str]:
    """A failed attempt's details and message with its attempt count and next attempt."""
    details = {**details, "attempts": attempts}
    if next_attempt_at is None:
        return details, f"{message}; attempt {attempts}"
    details["next_attempt_at"] = next_attempt_at
    return details, f"{message}; attempt {attempts}, next at {next_attempt_at}"


def _recorded_already(
    stored: dict[str, Any] | None, reason: str, message: str, details: dict[str, Any]
) -> bool:
    """Whether the stored Phase condition says this already: the same reason, message (the counts per
    category, the first hint) and details, apart from the time and the sample of a few nodes' reasons
    (``nodes``: their free amounts move with every bind elsewhere on them; ``why`` lists every node's
    reason afresh for a Pending replica)."""
    if stored is None:
        return False
    said = (stored.get("status"), stored.get("reason"), stored.get("message"))
    return said == ("False", reason, message) and _without_sample(stored.get("details") or {}) == (
        _without_sample(details)
    )


def _without_sample(details: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in details.items() if key != "nodes"}


def _failed_attempt(
    replica: ReplicaState, reason: str, message: str, details: dict[str, Any], now: datetime, failure: str
) -> ReplicaUpdate | KeptRetry:
    if replica.is_waived_retry(now):
        stored = phase_condition_of(replica.obj.get("status", {}))
        recorded_next = ((stored or {}).get("details") or {}).get("next_attempt_at")
        kept_details, kept_message = _with_attempts(details, message, replica.attempts, recorded_next)
        if _recorded_already(stored, reason, kept_message, kept_details):
            return KeptRetry(replica, failure)
    attempts = replica.attempts + 1
    next_attempt = next_attempt_after(attempts, now)
    details, message = _with_attempts(
        details, message, attempts, None if next_attempt is None else format_timestamp(next_attempt)
    )
    status = dict(replica.obj.get("status", {}))
    status["conditions"] = with_phase_condition(status, phase_condition(False, reason, message, now, details))
    audit = None
    if next_attempt is not None:
        audit = AuditEntry(
            "placement_backoff",
            "scheduler",
            f"replicas/{replica.name}",
            f"not placed after {attempts} attempts ({reason}); next attempt at {details['next_attempt_at']}",
            {"attempts": attempts, "next_attempt_at": details["next_attempt_at"], "reason": reason},
        )
    return ReplicaUpdate(
        replica.name,
        _put(replica, status),
        "wait",
        audit=audit,
        failure=failure,
        backoff=is_backoff(attempts),
        entered_backoff=enters_backoff(attempts),
        message=message,
    )


def missing_hosts(spec: dict[str, Any], nodes: dict[str, Node]) -> list[str]:
    """The listed hosts that cannot take a replica: unknown, NotReady or cordoned (JACO C4)."""
    return sorted(
        host
        for host in spec.get("hosts", [])
        if host not in nodes or nodes[host].state != "Ready" or nodes[host].unschedulable
    )


class ExplanationTexts:
    """The condition details and message of each explanation, made once per cycle: the tasks of one
    equivalence class share one explanation (cycle.py), and its details sort every node's reason
    (10,000 replicas of 10 classes on 5,000 nodes: 10 sorts, not 10,000)."""

    def __init__(self, node_count: int) -> None:
        self._node_count = node_count
        self._made: dict[int, tuple[Explanation, dict[str, Any], str]] = {}

    def of(self, explanation: Explanation) -> tuple[dict[str, Any], str]:
        """A details dict of the caller's own (its nested values are shared: never mutate those), and
        the message."""
        made = self._made.get(id(explanation))
        if made is None:  # the explanation is kept in the entry, so its id is never reused meanwhile
            details = explanation_details(explanation)
            made = (explanation, details, explanation_message(explanation, self._node_count))
            self._made[id(explanation)] = made
        return dict(made[1]), made[2]


def _wait_update(
    replica: ReplicaState,
    explanation: Explanation,
    nodes: dict[str, Node],
    texts: ExplanationTexts,
    now: datetime,
) -> ReplicaUpdate | KeptRetry:
    spec = replica.obj.get("spec", {})
    details, message = texts.of(explanation)
    missing = missing_hosts(spec, nodes) if spec.get("placement") == "hosts" else []
    if missing:
        details["pending"] = {"reason": HOST_PLACEMENT_REASON, "missing": missing}
        message = (
            f"placement=hosts: no replica is placed until all can be; missing {', '.join(missing)}; {message}"
        )
        return _failed_attempt(replica, HOST_PLACEMENT_REASON, message, details, now, HOST_PLACEMENT_REASON)
    failure = _top_category(explanation) if explanation.summary else failure_label(explanation.reason)
    return _failed_attempt(replica, "Unschedulable", message, details, now, failure)


def _blocked_update(blocked: BlockedReplica, now: datetime) -> ReplicaUpdate | KeptRetry:
    if blocked.not_before is not None:  # waiting for its time, not failing: no attempt is counted
        return _waiting_until(blocked.replica, blocked.reason, blocked.message, blocked.not_before, now)
    return _failed_attempt(blocked.replica, blocked.reason, blocked.message, {}, now, blocked.failure)


def _waiting_until(
    replica: ReplicaState, reason: str, message: str, not_before: datetime, now: datetime
) -> ReplicaUpdate | KeptRetry:
    details = {"attempts": replica.attempts, "next_attempt_at": format_timestamp(not_before)}
    stored = phase_condition_of(replica.obj.get("status", {}))
    if replica.is_waived_retry(now) and _recorded_already(stored, reason, message, details):
        return KeptRetry(replica, None)
    status = dict(replica.obj.get("status", {}))
    status["conditions"] = with_phase_condition(status, phase_condition(False, reason, message, now, details))
    return ReplicaUpdate(replica.name, _put(replica, status), "wait")


def failure_label(reason: str) -> str:
    """A fixed label value of ``loadmaster_failures_total`` for an action's reason text: the action's
    name (``reclaim: no victim set lets it fit`` -> ``reclaim``), ``queue_limit``, ``gang``, or ``other``
    (never a piece of free text: every distinct value would be a new time series)."""
    word = reason.split(" ", 1)[0].removesuffix(":")
    if word in ACTIONS:
        return word
    return REASON_LABELS.get(word, "other")


def _top_category(explanation: Explanation) -> str:
    """The rejection category that turned away the most nodes (ties: alphabetical)."""
    return min(explanation.summary.items(), key=lambda item: (-item[1], item[0]))[0]
