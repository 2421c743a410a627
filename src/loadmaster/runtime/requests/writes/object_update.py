"""Read, change and write back one object with CAS (``plane/store_retries.py`` retries it when someone
else wrote in between).

Every API write that changes an existing object (cordon, heartbeat, replica status) goes through
``update_object``: the change is a pure function of the object as read. The audit entry, when there
is one, lands in the same transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from loadmaster.manifests import object_ref
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.audit import AuditEntry
from loadmaster.runtime.plane.errors import NotFoundError
from loadmaster.runtime.plane.storage.store_layout import decode_object, encode_object, object_key
from loadmaster.runtime.plane.storage.store_retries import write_latest
from loadmaster.store.interface import Entry, Op, Put

Mutation = Callable[[dict[str, Any]], dict[str, Any] | None]  # None: nothing to change


async def update_object(
    plane: ControlPlane, kind: str, name: str, mutate: Mutation, audit: AuditEntry | None = None
) -> dict[str, Any]:
    """The object after ``mutate`` (with its new revision); NotFoundError if it does not exist."""
    key = object_key(kind, name)

    def plan(entry: Entry | None) -> tuple[Sequence[Op], dict[str, Any]]:
        if entry is None:
            raise NotFoundError(f"{object_ref(kind, name)} not found")
        current = decode_object(entry.value, entry.mod_revision)
        changed = mutate(current)
        if changed is None:
            return [], current
        ops: list[Op] = [Put(key, encode_object(changed), expect_revision=entry.mod_revision)]
        if audit is not None:
            ops.extend(plane.audit.ops([audit]))
        return ops, changed

    obj, revision = await write_latest(
        plane.store, key, plane.write_fence, plan, what=object_ref(kind, name), doing="written"
    )
    if revision is not None:
        obj["metadata"] = {**obj.get("metadata", {}), "revision": revision}
    return obj
