"""``loadmaster rollback DEPLOYMENT``: apply the deployment's previous revision again.

A rollback is an apply of the previous revision's spec (``manifests/deployment_revisions.py``): it
stores a new revision, and the deployment controller rolls the changed services to it as it rolls
any apply (a RolloutPlan when a service has more than one replica). A deployment with no previous
revision (applied once, or its previous revision no longer kept) is refused naming
``previous_revision``, and nothing is stored.
"""

from __future__ import annotations

from typing import Any

from loadmaster.manifests import DEPLOYMENT, Manifest, object_ref
from loadmaster.manifests.deployment_revisions import find_revision
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.audit import AuditEntry
from loadmaster.runtime.plane.errors import FieldProblem, InvalidError, NotFoundError
from loadmaster.runtime.plane.storage.store_layout import object_key, object_of
from loadmaster.runtime.requests.writes.object_writes import store_manifests


async def rollback_deployment(plane: ControlPlane, name: str, actor: str) -> dict[str, Any]:
    """Re-apply ``name``'s previous revision; ``{deployment, from_revision, to_spec_of, revision}``."""
    ref = object_ref(DEPLOYMENT, name)
    entry = await plane.store.get(object_key(DEPLOYMENT, name))
    if entry is None:
        raise NotFoundError(f"{ref} not found")
    stored = object_of(entry)
    status = stored.get("status") or {}
    previous = status.get("previous_revision")
    revision = find_revision(status, previous if isinstance(previous, int) else None)
    if revision is None:
        why = "has no previous revision" if previous is None else f"no longer keeps revision {previous}"
        message = f"previous_revision: {ref} {why} to roll back to; nothing was changed"
        raise InvalidError(message, [FieldProblem("previous_revision", message, ref)])
    metadata = {
        k: v for k, v in (stored.get("metadata") or {}).items() if k in ("name", "labels", "annotations")
    }
    manifest = Manifest(kind=DEPLOYMENT, name=name, metadata=metadata, spec=dict(revision["spec"]))
    applied = await store_manifests(plane, [manifest], actor)
    action = applied.items[0]["action"]
    after = await plane.store.get(object_key(DEPLOYMENT, name))
    new_revision = (object_of(after).get("status") or {}).get("applied_revision") if after else None
    details = {
        "from_revision": status.get("applied_revision"),
        "to_spec_of": revision["revision"],
        "revision": new_revision,
        "action": action,
    }
    message = (
        f"rolled {ref} back to the spec of revision {revision['revision']} (now revision {new_revision})"
    )
    if action == "unchanged":
        message = f"{ref} already runs the spec of revision {revision['revision']}; nothing to roll back"
    fence = await plane.write_fence()
    await plane.store.txn(plane.audit.ops([AuditEntry("rollback", actor, ref, message, details)]), fence)
    return {"deployment": name, "message": message, **details}
