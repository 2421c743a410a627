"""The API's writes of whole objects: apply, delete, cordon, tokens (replica/node status: status_writes.py).

Apply stores validated manifests (validation happens before, in the API: all documents or none), in
batched fenced transactions, each object with its audit entry. An object keeps what the server owns
(``status``, ``created_at``) and takes the manifest's ``spec`` (and labels/annotations when the
manifest has them); ``generation`` counts spec changes. Objects that conflict with a concurrent
writer are re-read and retried; what still conflicts after that is refused as a conflict.

What is atomic (docs/cli.md, docs/api.md): validation is all or nothing; storing is all or nothing per
transaction, and a transaction holds at most ``OBJECTS_PER_TXN`` objects (each with its audit entry,
within the store's MAX_TXN_OPS). A larger apply, or one whose objects conflicted and were retried,
takes several transactions, in document order: a server killed between two of them keeps the first
ones, and applying the same documents again completes it. ``transactions`` in the answer says how
many there were (1: the apply was stored all or nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import structlog

from loadmaster.manifests import API_VERSION, DEPLOYMENT, JOB, NODE, REPLICA, Manifest, object_ref
from loadmaster.manifests.deployment_revisions import with_new_revision
from loadmaster.manifests.replicas import ReplicaPhase
from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.manifests.validation import dns_name_problem
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.admission import check_admission
from loadmaster.runtime.plane.audit import AuditEntry
from loadmaster.runtime.plane.ended_records import ended_put
from loadmaster.runtime.plane.errors import (
    FieldProblem,
    InvalidError,
    NotFoundError,
    RequestError,
    WriteConflictError,
)
from loadmaster.runtime.plane.phase_condition import phase_condition, with_phase_condition
from loadmaster.runtime.plane.stop_orders import stop_order
from loadmaster.runtime.plane.storage.batched_writes import WriteGroup, write_groups
from loadmaster.runtime.plane.storage.store_layout import encode_object, heartbeat_key, object_key, object_of
from loadmaster.runtime.plane.storage.store_retries import MAX_WRITE_ATTEMPTS, write_latest
from loadmaster.runtime.plane.tokens import AGENT, new_token, token_put
from loadmaster.runtime.requests.writes.object_update import update_object
from loadmaster.runtime.requests.writes.runnable_images import check_images_runnable
from loadmaster.store.interface import MAX_TXN_OPS, Delete, Entry, Op, Put, StoreError, UnavailableError
from loadmaster.wire import ApplyItem

log = structlog.get_logger(__name__)

_OWNED_METADATA = ("labels", "annotations")
# Each object is its put and its audit entry; one op per transaction goes to the audit counter and one
# compare to the fence: (128 - 2) // 2.
OBJECTS_PER_TXN = (MAX_TXN_OPS - 2) // 2


@dataclass(frozen=True, slots=True)
class AppliedManifests:
    items: list[ApplyItem]  # per manifest, in order
    transactions: int  # how many store transactions they were written in (0: nothing changed)


def merged_object(manifest: Manifest, entry: Entry | None, now: str) -> tuple[dict[str, Any], str]:
    """The object to store for ``manifest`` over what is stored, and the action (created, configured,
    unchanged)."""
    if entry is None:
        metadata = {"name": manifest.name, "created_at": now, "generation": 1}
        metadata.update({k: manifest.metadata[k] for k in _OWNED_METADATA if k in manifest.metadata})
        obj = {"api_version": API_VERSION, "kind": manifest.kind, "metadata": metadata, "spec": manifest.spec}
        if manifest.kind == DEPLOYMENT:
            obj["status"] = with_new_revision({}, manifest.spec, now)
        return obj, "created"
    stored = object_of(entry)
    metadata = {k: v for k, v in stored.get("metadata", {}).items() if k != "revision"}
    updated = {**metadata, **{k: manifest.metadata[k] for k in _OWNED_METADATA if k in manifest.metadata}}
    spec_changed = stored.get("spec") != manifest.spec
    if not spec_changed and updated == metadata:
        return stored, "unchanged"
    if spec_changed:
        generation = metadata.get("generation", 1)
        updated["generation"] = (generation if isinstance(generation, int) else 1) + 1
        if manifest.kind == DEPLOYMENT:
            status = with_new_revision(stored.get("status") or {}, manifest.spec, now)
            return {**stored, "metadata": updated, "spec": manifest.spec, "status": status}, "configured"
    return {**stored, "metadata": updated, "spec": manifest.spec}, "configured"


async def apply_manifests(plane: ControlPlane, manifests: Sequence[Manifest], actor: str) -> list[ApplyItem]:
    """Store every manifest; returns ``{kind, name, action}`` per manifest, in order."""
    return (await store_manifests(plane, manifests, actor)).items


async def store_manifests(plane: ControlPlane, manifests: Sequence[Manifest], actor: str) -> AppliedManifests:
    """Store every manifest; what was done to each, and in how many transactions."""
    check_admission(manifests, plane.settings.admission)  # 422 above the server's limits
    check_images_runnable(manifests, (cached.obj for cached in plane.cache.objects[NODE].values()))
    actions: dict[str, str] = {}
    transactions = 0
    todo = list(manifests)
    for _ in range(MAX_WRITE_ATTEMPTS):
        fence = await plane.write_fence()
        now = format_timestamp(plane.clock.now())
        groups: list[WriteGroup[Manifest]] = []
        planned: dict[str, str] = {}
        for manifest in todo:
            key = object_key(manifest.kind, manifest.name)
            entry = await plane.store.get(key)
            obj, action = merged_object(manifest, entry, now)
            planned[manifest.ref] = action
            if action == "unchanged":
                actions[manifest.ref] = action
                continue
            audit = AuditEntry(
                "apply",
                actor,
                manifest.ref,
                f"{action} {manifest.ref}",
                {"action": action, "generation": obj["metadata"].get("generation")},
            )
            put = Put(key, encode_object(obj), expect_revision=entry.mod_revision if entry else 0)
            groups.append(WriteGroup(manifest, (put, plane.audit.entry_put(audit))))
        outcome = await write_groups(
            plane.store, groups, fence, extras=lambda _batch: [plane.audit.counter_put()], extras_room=1
        )
        transactions += outcome.transactions
        for manifest in outcome.written:
            actions[manifest.ref] = planned[manifest.ref]
        todo = outcome.conflicts
        if not todo:
            break
    if todo:
        refs = ", ".join(m.ref for m in todo)
        raise WriteConflictError(
            f"{refs} kept changing while being applied; nothing else was left out; try again"
        )
    items: list[ApplyItem] = [{"kind": m.kind, "name": m.name, "action": actions[m.ref]} for m in manifests]
    return AppliedManifests(items, transactions)


def _terminating(obj: dict[str, Any], reason: str, message: str, now: datetime) -> dict[str, Any]:
    status = dict(obj.get("status", {}))
    status["phase"] = ReplicaPhase.TERMINATING.value
    status["stop"] = stop_order(obj.get("spec", {}))
    status["conditions"] = with_phase_condition(status, phase_condition(False, reason, message, now))
    return {**obj, "status": status}


async def delete_object(plane: ControlPlane, kind: str, name: str, actor: str) -> None:
    """Delete one object; a Deployment's or Job's replicas go Terminating (their agents stop them);
    deleting a replica stops it the same way (or drops its record if it never had a node).

    Once the delete is committed the request succeeds, whatever happens next: stopping the owner's
    replicas is best effort (the controllers stop what is left), and a store that loses the answer
    to a committed delete is asked again whether the object is still there."""
    key, ref = object_key(kind, name), object_ref(kind, name)

    def plan(entry: Entry | None) -> tuple[Sequence[Op], None]:
        if entry is None:
            raise NotFoundError(f"{ref} not found")
        obj = object_of(entry)
        if _is_placed_replica(kind, obj):
            if _is_stopping(obj):
                return [], None  # already being stopped
            stopped = _terminating(obj, "Deleted", f"deleted by {actor}", plane.clock.now())
            ops: list[Op] = [Put(key, encode_object(stopped), expect_revision=entry.mod_revision)]
        else:
            ops = [Delete(key, expect_revision=entry.mod_revision)]
            if kind == NODE:  # its lease goes with it; it stays readable as an ended record (LRS K2)
                ops.append(Delete(heartbeat_key(name)))
                ops.append(ended_put(NODE, obj, entry.mod_revision, plane.clock.now()))
        return [*ops, *plane.audit.ops([AuditEntry("delete", actor, ref, f"deleted {ref}")])], None

    try:
        await write_latest(plane.store, key, plane.write_fence, plan, what=ref, doing="deleted")
    except UnavailableError:
        # The answer may have been lost after the commit (etcd timing out a write it then applies):
        # what is stored now says whether the delete the client asked for holds.
        if not await _is_deleted(plane, kind, key):
            raise
        log.info("a delete whose answer was lost is in the store", object=ref)
    if kind in (DEPLOYMENT, JOB):
        try:
            await _stop_replicas(plane, kind, name, actor)
        except (RequestError, StoreError) as error:
            # Not the client's failure: the owner is gone, and the controllers of whichever server
            # leads stop its replicas on their next pass.
            log.warning("replicas of a deleted owner left to the controllers", owner=ref, error=str(error))


def _is_placed_replica(kind: str, obj: dict[str, Any]) -> bool:
    status = obj.get("status", {})
    return (
        kind == REPLICA
        and bool(status.get("node_ref"))
        and status.get("phase") != ReplicaPhase.TERMINATED.value
    )


def _is_stopping(obj: dict[str, Any]) -> bool:
    return bool(obj.get("status", {}).get("phase") == ReplicaPhase.TERMINATING.value)


async def _is_deleted(plane: ControlPlane, kind: str, key: str) -> bool:
    """Whether what ``delete_object`` writes for ``key`` is in the store (gone, or a replica stopping)."""
    entry = await plane.store.get(key)
    if entry is None:
        return True
    obj = object_of(entry)
    return _is_placed_replica(kind, obj) and _is_stopping(obj)


async def _stop_replicas(plane: ControlPlane, kind: str, owner: str, actor: str) -> None:
    """Mark the owner's replicas Terminating; any left out (changed meanwhile) the controllers stop later."""
    fence = await plane.write_fence()
    now = plane.clock.now()
    groups: list[WriteGroup[str]] = []
    for cached in list(plane.cache.objects[REPLICA].values()):
        spec, status = cached.obj.get("spec", {}), cached.obj.get("status", {})
        if spec.get("owner_kind") != kind or spec.get("owner") != owner:
            continue
        if status.get("phase") in (ReplicaPhase.TERMINATING.value, ReplicaPhase.TERMINATED.value):
            continue
        stopped = _terminating(
            cached.obj, f"{kind}Deleted", f"{object_ref(kind, owner)} deleted by {actor}", now
        )
        groups.append(
            WriteGroup(
                cached.name,
                (
                    Put(
                        object_key(REPLICA, cached.name),
                        encode_object(stopped),
                        expect_revision=cached.mod_revision,
                    ),
                ),
            )
        )
    await write_groups(plane.store, groups, fence)


async def set_cordon(plane: ControlPlane, name: str, unschedulable: bool, actor: str) -> dict[str, Any]:
    verb = "cordon" if unschedulable else "uncordon"

    def mutate(node: dict[str, Any]) -> dict[str, Any] | None:
        if bool(node.get("spec", {}).get("unschedulable", False)) == unschedulable:
            return None
        return {**node, "spec": {**node.get("spec", {}), "unschedulable": unschedulable}}

    audit = AuditEntry(verb, actor, object_ref(NODE, name), f"{verb}ed nodes/{name}")
    return await update_object(plane, NODE, name, mutate, audit)


async def create_token(plane: ControlPlane, role: str, actor: str, node: str | None = None) -> str:
    """A new token with ``role`` (shown to the caller once; only its hash is stored); an agent token
    with ``node`` is bound to that node."""
    if node is not None:
        problem = (
            dns_name_problem(node)
            if role == AGENT
            else f"only an agent token is bound to a node, not a {role} token"
        )
        if problem:
            raise InvalidError(f"node: {problem}", [FieldProblem("node", problem)])
    fence = await plane.write_fence()
    token = new_token()
    put = token_put(token, role, plane.clock, f"created by {actor}", node)
    bound = f" bound to nodes/{node}" if node is not None else ""
    audit = AuditEntry(
        "token", actor, "tokens", f"created a {role} token{bound}", {"role": role, "node": node}
    )
    await plane.store.txn([put, *plane.audit.ops([audit])], fence)
    return token
