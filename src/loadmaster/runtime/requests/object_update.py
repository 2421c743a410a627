"""Read, change and write back one object with CAS, retrying when someone else wrote in between.

Every API write that changes an existing object (cordon, heartbeat, replica status) goes through
``update_object``: the change is a pure function of the object as read, so a retry simply recomputes
it from the fresher copy. The audit entry, when there is one, lands in the same transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loadmaster.manifests import object_ref
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.audit import AuditEntry
from loadmaster.runtime.plane.errors import NotFoundError, WriteConflictError
from loadmaster.runtime.plane.store_layout import decode_object, encode_object, object_key
from loadmaster.store.interface import ConflictError, Op, Put

# Writers racing on one object (an agent's heartbeat and an admin's cordon) settle within a few tries.
MAX_WRITE_ATTEMPTS = 5

Mutation = Callable[[dict[str, Any]], dict[str, Any] | None]  # None: nothing to change


async def update_object(
    plane: ControlPlane, kind: str, name: str, mutate: Mutation, audit: AuditEntry | None = None
) -> dict[str, Any]:
    """The object after ``mutate`` (with its new revision); NotFoundError if it does not exist."""
    key = object_key(kind, name)
    for _ in range(MAX_WRITE_ATTEMPTS):
        fence = await plane.write_fence()
        entry = await plane.store.get(key)
        if entry is None:
            raise NotFoundError(f"{object_ref(kind, name)} not found")
        current = decode_object(entry.value, entry.mod_revision)
        changed = mutate(current)
        if changed is None:
            return current
        ops: list[Op] = [Put(key, encode_object(changed), expect_revision=entry.mod_revision)]
        if audit is not None:
            ops.extend(plane.audit.ops([audit]))
        try:
            revision = await plane.store.txn(ops, fence)
        except ConflictError as conflict:
            if conflict.key != key:
                raise
            continue
        changed["metadata"] = {**changed.get("metadata", {}), "revision": revision}
        return changed
    raise WriteConflictError(f"{object_ref(kind, name)} kept changing while being written; try again")
