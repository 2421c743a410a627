"""Replacement changes -> store operations (``controllers/replacement.py`` says when each is asked for).

* ``StartReplacement``: ``X.next`` created (must not exist), a copy of X's spec (or of its owner's current
  spec, for a rollout's new ``spec_hash``) with a new incarnation and the replacement fields; Pending,
  or Scheduled on a reserved destination node; ``status.previous_node_ref`` is X's node (AVA C9: a
  Pending replacement is placed there when that node passes its filters).
* ``CompleteReplacement``: ONE transaction, CAS on both revisions: the key X is overwritten with
  ``X.next``'s object renamed (same incarnation, same status, the replacement fields dropped) and
  ``X.next`` is deleted. Nothing else is needed: a crash before it leaves both records as they were,
  after it leaves the swap done.
* ``AbortReplacement``: ``X.next`` deleted (CAS); X untouched.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from loadmaster.controllers.changes import AbortReplacement, CompleteReplacement, StartReplacement
from loadmaster.manifests import DEPLOYMENT, JOB, REPLICA, Manifest, job_replica, service_replica
from loadmaster.manifests.deployment_revisions import spec_with_service_hash
from loadmaster.manifests.kinds.replica import REPLACEMENT_FIELDS
from loadmaster.manifests.replicas import ReplicaPhase, new_incarnation, replacement_name
from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.runtime.plane.object_cache import ObjectCache
from loadmaster.runtime.plane.phase_condition import phase_condition
from loadmaster.runtime.plane.storage.store_layout import encode_object, object_key
from loadmaster.runtime.reconciling.controller_views import SPEC_HASHES
from loadmaster.store.interface import Delete, Op, Put

RESERVED = "Reserved"  # the Phase condition reason of a replacement created bound to its destination


def replacement_ops(
    cache: ObjectCache, change: StartReplacement | CompleteReplacement | AbortReplacement, now: datetime
) -> list[Op] | None:
    """The ops of one replacement change; None when what it was computed from has changed."""
    if isinstance(change, StartReplacement):
        return _start(cache, change, now)
    if isinstance(change, CompleteReplacement):
        return _complete(cache, change)
    next_name = replacement_name(change.replica)
    cached = cache.get(REPLICA, next_name)
    if cached is None or cached.mod_revision != change.replacement_revision:
        return None
    return [Delete(object_key(REPLICA, next_name), expect_revision=change.replacement_revision)]


def _new_spec(cache: ObjectCache, old: dict[str, Any], spec_hash: str | None) -> dict[str, Any] | None:
    """X's spec, or with another ``spec_hash`` its owner's spec for X's slot: the current one, or for a
    deployment a kept revision's (an aborted rollout returning to its last good revision) (None: the
    owner is gone or has no such hash)."""
    spec: dict[str, Any] = old.get("spec", {})
    if spec_hash is None or spec_hash == spec.get("spec_hash"):
        return {k: v for k, v in spec.items() if k not in REPLACEMENT_FIELDS}
    owner = cache.get(spec.get("owner_kind", ""), spec.get("owner", ""))
    if owner is None:
        return None
    manifest = Manifest.from_stored(owner.obj)
    if spec.get("owner_kind") == DEPLOYMENT:
        service = str(spec.get("service"))
        if SPEC_HASHES.service(owner, service) != spec_hash:
            status = owner.obj.get("status") or {}
            earlier = spec_with_service_hash(manifest.spec, status, service, spec_hash)
            if earlier is None:
                return None
            manifest = replace(manifest, spec=dict(earlier))
        where = {"host": spec["host"]} if "host" in spec else {"index": spec.get("index")}
        return service_replica(manifest, service, spec_hash=spec_hash, **where).spec
    if spec.get("owner_kind") == JOB and SPEC_HASHES.job(owner) == spec_hash:
        return job_replica(manifest, int(spec.get("index", 0)), spec_hash=spec_hash).spec
    return None


def _start(cache: ObjectCache, change: StartReplacement, now: datetime) -> list[Op] | None:
    cached = cache.get(REPLICA, change.replica)
    if cached is None or cached.mod_revision != change.revision:
        return None
    spec = _new_spec(cache, cached.obj, change.spec_hash)
    if spec is None:
        return None
    name = replacement_name(change.replica)
    spec.update(
        incarnation=new_incarnation(name, cache.revision),
        replaces=change.replica,
        replacement_reason=change.reason,
    )
    if change.avoid_nodes:
        spec["avoid_nodes"] = list(change.avoid_nodes)
    if change.deadline is not None:
        spec["replacement_deadline"] = format_timestamp(change.deadline)
    status: dict[str, Any] = {"phase": ReplicaPhase.PENDING.value}
    source = cached.obj.get("status", {}).get("node_ref")
    if change.node is not None:
        message = f"replacement of {change.replica} ({change.reason}) bound to reserved node {change.node}"
        condition = phase_condition(True, RESERVED, message, now)
        status = {"phase": ReplicaPhase.SCHEDULED.value, "node_ref": change.node, "conditions": [condition]}
    if source:  # where X runs: a Pending replacement's stickiness hint, a reserved one's move source
        status["previous_node_ref"] = source
    obj = {
        "api_version": cached.obj.get("api_version", "loadmaster/v1"),
        "kind": REPLICA,
        "metadata": {"name": name, "created_at": format_timestamp(now)},
        "spec": spec,
        "status": status,
    }
    return [Put(object_key(REPLICA, name), encode_object(obj), expect_revision=0)]


def _complete(cache: ObjectCache, change: CompleteReplacement) -> list[Op] | None:
    old = cache.get(REPLICA, change.replica)
    next_name = replacement_name(change.replica)
    new = cache.get(REPLICA, next_name)
    if old is None or new is None:
        return None
    if old.mod_revision != change.revision or new.mod_revision != change.replacement_revision:
        return None
    spec = {k: v for k, v in new.obj.get("spec", {}).items() if k not in REPLACEMENT_FIELDS}
    metadata = {**new.obj.get("metadata", {}), "name": change.replica}
    moved = {**new.obj, "metadata": metadata, "spec": spec}
    return [
        Put(object_key(REPLICA, change.replica), encode_object(moved), expect_revision=change.revision),
        Delete(object_key(REPLICA, next_name), expect_revision=change.replacement_revision),
    ]
