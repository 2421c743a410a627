"""Controllers' changes -> store writes (fenced, CAS on every revision the change was computed from).

New replicas of a service are written with the service's counter in the same transaction (at most
124 replicas, the counter, the fence and the chunk's audit entry with its counter per transaction, one
transaction after another, each CAS on the counter's revision): an index is handed out only if the
replicas it numbers are stored with it.
Everything else goes through ``write_groups``: one group per change, a conflicting one set aside,
except a Job's new replicas, which are split into groups of at most ``JOB_REPLICAS_PER_TXN`` (a Job of
any size fits the store's transaction limit). Every replica's name is fixed by its index and every
create expects the key to be absent, so a pass stopped between two transactions (a crash, a lost
term) leaves whole chunks behind, and the next pass creates exactly the indices still missing. Every
change carries its audit entry (``change_audit.py``) in the transaction that makes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from loadmaster.controllers.changes import (
    AbortReplacement,
    Change,
    CompleteDrain,
    CompleteReplacement,
    CreateGlobalReplica,
    CreateJobReplicas,
    CreateServiceReplicas,
    DeleteReplica,
    FailReplica,
    MarkNodeLost,
    MarkNodeNotReady,
    NoteDrainBlocked,
    RecordNodeProbe,
    RestartReplica,
    ReturnToPending,
    StartReplacement,
    TerminateReplica,
    TimeOutDrain,
    UpdateRollout,
)
from loadmaster.manifests import (
    DEPLOYMENT,
    JOB,
    NODE,
    REPLICA,
    Manifest,
    job_replica,
    replica_name,
    service_replica,
)
from loadmaster.manifests.deployment_revisions import spec_with_service_hash
from loadmaster.manifests.replicas import ReplicaPhase, new_incarnation
from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.runtime.plane.audit import AuditLog
from loadmaster.runtime.plane.ended_records import ended_put
from loadmaster.runtime.plane.object_cache import ObjectCache
from loadmaster.runtime.plane.phase_condition import phase_condition, with_phase_condition
from loadmaster.runtime.plane.stop_orders import stop_order
from loadmaster.runtime.plane.storage.batched_writes import WriteGroup, write_groups
from loadmaster.runtime.plane.storage.store_layout import (
    counter_key,
    encode_object,
    heartbeat_key,
    object_key,
)
from loadmaster.runtime.reconciling.controller_views import SPEC_HASHES
from loadmaster.runtime.reconciling.writes.change_audit import audit_entry, replicas_created
from loadmaster.runtime.reconciling.writes.drain_writes import drain_ops
from loadmaster.runtime.reconciling.writes.replacement_writes import replacement_ops
from loadmaster.runtime.reconciling.writes.replica_commands import restart_ops
from loadmaster.runtime.reconciling.writes.rollout_writes import rollout_entries, rollout_ops
from loadmaster.store.codec import encode
from loadmaster.store.interface import MAX_TXN_OPS, ConflictError, Delete, Fence, Op, Put, Store

# One create per replica, plus the fence's compare, the chunk's audit entry and the audit counter: etcd
# counts them all against MAX_TXN_OPS.
JOB_REPLICAS_PER_TXN = MAX_TXN_OPS - 3


@dataclass(slots=True)
class ChangeOutcome:
    revision: int = 0
    written: int = 0
    conflicts: list[Change] = field(default_factory=list)


def new_replica(manifest: Manifest, now: datetime, revision: int) -> dict[str, Any]:
    """The object of a new replica; ``revision``: the store revision the creating pass has seen, which
    makes its incarnation (``new_incarnation``)."""
    obj = manifest.to_dict()
    obj["metadata"] = {**obj["metadata"], "created_at": format_timestamp(now)}
    obj["spec"] = {**obj["spec"], "incarnation": new_incarnation(manifest.name, revision)}
    return obj


def indexed_copy(
    template: dict[str, Any], deployment: str, service: str, index: int, revision: int
) -> dict[str, Any]:
    """``template`` (a new replica of the service) renamed and renumbered for ``index``: the same object
    ``service_replica(..., index=index)`` builds, without copying and hashing the service spec again
    for each of ten thousand replicas."""
    name = replica_name(deployment, service, index)
    return {
        **template,
        "metadata": {**template["metadata"], "name": name},
        "spec": {**template["spec"], "index": index, "incarnation": new_incarnation(name, revision)},
    }


async def write_changes(
    store: Store,
    cache: ObjectCache,
    changes: Sequence[Change],
    fence: Fence,
    now: datetime,
    audit: AuditLog | None = None,
) -> ChangeOutcome:
    """Write ``changes``, each with its audit entry (``change_audit.py``) in the same transaction."""
    outcome = ChangeOutcome()
    groups: list[WriteGroup[Change]] = []
    audited: set[int] = set()  # id() of the changes whose group carries an audit entry
    for change in changes:
        if isinstance(change, CreateServiceReplicas):
            await _create_service_replicas(store, cache, change, fence, now, outcome, audit)
            continue
        if isinstance(change, UpdateRollout):
            ops = rollout_ops(cache, change)
            if ops is not None and audit is not None and change.events:
                ops += [audit.entry_put(entry) for entry in rollout_entries(change)]
                audited.add(id(change))
            if ops is None:
                outcome.conflicts.append(change)
            else:
                groups.append(WriteGroup(change, tuple(ops)))
            continue
        ops = change_ops(cache, change, now)
        if ops is None:
            outcome.conflicts.append(change)  # its owner or object is gone from the cache already
        elif isinstance(change, CreateJobReplicas):
            for start in range(0, len(ops), JOB_REPLICAS_PER_TXN):
                chunk = ops[start : start + JOB_REPLICAS_PER_TXN]
                if audit is not None:
                    indices = change.indices[start : start + JOB_REPLICAS_PER_TXN]
                    entry = audit_entry(CreateJobReplicas(change.job, indices), now)
                    assert entry is not None
                    chunk.append(audit.entry_put(entry))
                    audited.add(id(change))
                groups.append(WriteGroup(change, tuple(chunk)))
        elif ops:
            entry = audit_entry(change, now) if audit is not None else None
            if audit is not None and entry is not None:
                ops.append(audit.entry_put(entry))
                audited.add(id(change))
            groups.append(WriteGroup(change, tuple(ops)))

    def audit_counter(batch: Sequence[WriteGroup[Change]]) -> list[Op]:
        """The audit counter, once per transaction that records entries."""
        if audit is None or not any(id(group.tag) in audited for group in batch):
            return []
        return [audit.counter_put()]

    written = await write_groups(store, groups, fence, extras=audit_counter, extras_room=1)
    outcome.revision = max(outcome.revision, written.revision)
    # A Job's chunks share one tag: count and report each change once.
    outcome.written += len(dict.fromkeys(written.written))
    outcome.conflicts.extend(dict.fromkeys(written.conflicts))
    return outcome


async def _create_service_replicas(
    store: Store,
    cache: ObjectCache,
    change: CreateServiceReplicas,
    fence: Fence,
    now: datetime,
    outcome: ChangeOutcome,
    audit: AuditLog | None,
) -> None:
    owner = cache.get(DEPLOYMENT, change.deployment)
    if owner is None:
        outcome.conflicts.append(change)
        return
    deployment = Manifest.from_stored(owner.obj)
    hashed = SPEC_HASHES.service(owner, change.service)
    if change.spec_hash is not None and change.spec_hash != hashed:
        status = owner.obj.get("status") or {}
        earlier = spec_with_service_hash(deployment.spec, status, change.service, change.spec_hash)
        if earlier is None:  # that revision is no longer kept: the next pass plans again
            outcome.conflicts.append(change)
            return
        deployment = replace(deployment, spec=dict(earlier))
        hashed = change.spec_hash
    first = service_replica(deployment, change.service, index=change.indices[0], spec_hash=hashed)
    template = new_replica(first, now, cache.revision)
    counter = cache.counters.get((change.deployment, change.service))
    counter_revision = counter[1] if counter is not None else 0
    # The counter and the fence's compare take one each; the audit entry and its counter two more.
    room = MAX_TXN_OPS - 2 - (2 if audit is not None else 0)
    for start in range(0, len(change.indices), room):
        chunk = change.indices[start : start + room]
        ops: list[Op] = [] if audit is None else audit.ops([replicas_created(change, chunk)])
        ops += [
            Put(
                counter_key(change.deployment, change.service),
                encode({"next_index": chunk[-1] + 1}),
                expect_revision=counter_revision,
            )
        ]
        for index in chunk:
            obj = indexed_copy(template, change.deployment, change.service, index, cache.revision)
            ops.append(
                Put(object_key(REPLICA, obj["metadata"]["name"]), encode_object(obj), expect_revision=0)
            )
        try:
            counter_revision = await store.txn(ops, fence)
        except ConflictError:
            outcome.conflicts.append(change)
            return
        outcome.revision = max(outcome.revision, counter_revision)
        outcome.written += len(chunk)


def change_ops(cache: ObjectCache, change: Change, now: datetime) -> list[Op] | None:
    """The ops of one change; None when what it is about is no longer in the cache."""
    if isinstance(change, CreateGlobalReplica):
        owner = cache.get(DEPLOYMENT, change.deployment)
        if owner is None:
            return None
        deployment = Manifest.from_stored(owner.obj)
        hashed = SPEC_HASHES.service(owner, change.service)
        replica = service_replica(deployment, change.service, host=change.host, spec_hash=hashed)
        return [
            Put(
                object_key(REPLICA, replica.name),
                encode_object(new_replica(replica, now, cache.revision)),
                expect_revision=0,
            )
        ]
    if isinstance(change, CreateJobReplicas):
        owner = cache.get(JOB, change.job)
        if owner is None:
            return None
        job, hashed = Manifest.from_stored(owner.obj), SPEC_HASHES.job(owner)
        return [
            Put(
                object_key(REPLICA, r.name),
                encode_object(new_replica(r, now, cache.revision)),
                expect_revision=0,
            )
            for r in (job_replica(job, index, spec_hash=hashed) for index in change.indices)
        ]
    if isinstance(change, DeleteReplica):
        delete: list[Op] = [Delete(object_key(REPLICA, change.name), expect_revision=change.revision)]
        cached = cache.get(REPLICA, change.name)
        if cached is not None and cached.mod_revision == change.revision and _has_run(cached.obj):
            delete.append(ended_put(REPLICA, cached.obj, change.revision, now))
        return delete
    if isinstance(change, MarkNodeNotReady):
        return _node_not_ready(cache, change, now)
    if isinstance(change, RecordNodeProbe | MarkNodeLost):
        return _node_loss(cache, change, now)
    if isinstance(change, TerminateReplica | ReturnToPending | FailReplica):
        return _replica_status(cache, change, now)
    if isinstance(change, RestartReplica):
        return restart_ops(cache, change, now)
    if isinstance(change, StartReplacement | CompleteReplacement | AbortReplacement):
        return replacement_ops(cache, change, now)
    if isinstance(change, CompleteDrain | TimeOutDrain | NoteDrainBlocked):
        return drain_ops(cache, change, now)
    raise TypeError(f"no store operations for {change!r}")


def _has_run(replica: dict[str, Any]) -> bool:
    """A replica that was placed on a node leaves an ended record (history); one never placed does not."""
    return bool(replica.get("status", {}).get("node_ref"))


def _replica_status(
    cache: ObjectCache, change: TerminateReplica | ReturnToPending | FailReplica, now: datetime
) -> list[Op] | None:
    cached = cache.get(REPLICA, change.name)
    if cached is None or cached.mod_revision != change.revision:
        return None
    status = dict(cached.obj.get("status", {}))
    if isinstance(change, TerminateReplica):
        status["phase"] = ReplicaPhase.TERMINATING.value
        status["stop"] = stop_order(cached.obj.get("spec", {}))
    elif isinstance(change, FailReplica):
        status["phase"] = ReplicaPhase.FAILED.value
        status["healthy"] = False
        status["degraded"] = status["exited"] = False
    else:
        status["phase"] = ReplicaPhase.PENDING.value
        if status.get("node_ref"):  # where it ran: the reschedule's source, and stickiness's hint
            status["previous_node_ref"] = status["node_ref"]
        status["inactive_since"] = format_timestamp(change.inactive_since or now)
        status.pop("node_ref", None)
        for held in ("devices", "address_slot", "address"):  # a node's device indices and pool slots
            status.pop(held, None)  # mean nothing elsewhere
    status["conditions"] = with_phase_condition(
        status, phase_condition(False, change.reason, change.message, now)
    )
    obj = {**cached.obj, "status": status}
    return [Put(object_key(REPLICA, change.name), encode_object(obj), expect_revision=change.revision)]


def _node_not_ready(cache: ObjectCache, change: MarkNodeNotReady, now: datetime) -> list[Op] | None:
    cached = cache.get(NODE, change.node)
    if cached is None or cached.mod_revision != change.revision:
        return None
    status = dict(cached.obj.get("status", {}))
    status["state"] = "NotReady"
    status.pop("node_loss", None)  # a new NotReady spell: its node-loss clock starts again
    ready = {
        "type": "Ready",
        "status": "False",
        "reason": "NotReadyAt",
        "message": change.message,
        "last_transition_time": format_timestamp(now),
    }
    status["conditions"] = [*(c for c in status.get("conditions", []) if c.get("type") != "Ready"), ready]
    obj = {**cached.obj, "status": status}
    ops: list[Op] = [Put(object_key(NODE, change.node), encode_object(obj), expect_revision=change.revision)]
    # The lease rewritten as read (created if there was none), compared on the revision read: a heartbeat
    # that landed after the view this mark was computed from makes the whole mark fail (store-layout.md).
    lease_at, lease_revision = cache.heartbeats.get(change.node, (status.get("last_heartbeat"), 0))
    if lease_at is not None:
        ops.append(Put(heartbeat_key(change.node), encode({"at": lease_at}), expect_revision=lease_revision))
    return ops


def _node_loss(cache: ObjectCache, change: RecordNodeProbe | MarkNodeLost, now: datetime) -> list[Op] | None:
    """``status.node_loss``: the probe's answer and when, and once the policy acted, when and how."""
    cached = cache.get(NODE, change.node)
    if cached is None or cached.mod_revision != change.revision:
        return None
    status = dict(cached.obj.get("status", {}))
    record: dict[str, Any] = {"probe": change.answer, "probed_at": format_timestamp(change.probed_at)}
    if isinstance(change, MarkNodeLost):
        record.update(lost_at=format_timestamp(now), policy=change.policy, moved=list(change.replicas))
    status["node_loss"] = record
    obj = {**cached.obj, "status": status}
    return [Put(object_key(NODE, change.node), encode_object(obj), expect_revision=change.revision)]
