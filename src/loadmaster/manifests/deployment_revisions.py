"""A Deployment's revisions: every apply that changes its spec stores one (issue 15, "Revisions").

The history lives in the deployment's server-owned ``status`` (so the leader's cache has it, and an abort
can rebuild replicas of the last good revision without reading the store)::

    status:
      applied_revision: 3          # the revision the spec is now
      previous_revision: 2         # the one before it (null after the first apply)
      revisions:                   # the last KEPT_REVISIONS, oldest first
        - {revision: 2, applied_at: ..., spec: {...}, spec_hashes: {api: <sha256>, ...}}
        - {revision: 3, ...}

Revision numbers only grow (a rollback stores a new revision with the old spec). A replicas-only change
is a revision too (it changes the deployment), but a service's spec hash leaves ``replicas`` out, so it
rolls nothing: it scales.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadmaster.manifests.replicas import spec_hash

# Enough to roll back several applies; each revision is a copy of the spec, so the object stays small.
KEPT_REVISIONS = 10


def service_hashes(spec: Mapping[str, Any]) -> dict[str, str]:
    """``{service name: spec hash}`` of a deployment spec (the hash every replica of it carries)."""
    return {str(service.get("name")): spec_hash(service) for service in spec.get("services", [])}


def revisions_of(status: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The stored revisions, oldest first ([] for a deployment stored before revisions existed)."""
    revisions = status.get("revisions")
    return [r for r in revisions if isinstance(r, dict)] if isinstance(revisions, list) else []


def find_revision(status: Mapping[str, Any], number: int | None) -> dict[str, Any] | None:
    """Revision ``number`` if it is still kept."""
    if number is None:
        return None
    return next((r for r in revisions_of(status) if r.get("revision") == number), None)


def with_new_revision(status: Mapping[str, Any], spec: Mapping[str, Any], applied_at: str) -> dict[str, Any]:
    """``status`` with ``spec`` stored as the next revision: applied_revision moves to it, previous to
    the one it replaces, and only the last ``KEPT_REVISIONS`` stay."""
    revisions = revisions_of(status)
    applied = status.get("applied_revision")
    number = (applied if isinstance(applied, int) else 0) + 1
    entry = {
        "revision": number,
        "applied_at": applied_at,
        "spec": dict(spec),
        "spec_hashes": service_hashes(spec),
    }
    return {
        **status,
        "applied_revision": number,
        "previous_revision": applied if isinstance(applied, int) else None,
        "revisions": [*revisions, entry][-KEPT_REVISIONS:],
    }


def spec_with_service_hash(
    spec: Mapping[str, Any], status: Mapping[str, Any], service: str, wanted: str
) -> Mapping[str, Any] | None:
    """The deployment spec (the current one, else the newest kept revision) whose ``service`` hashes to
    ``wanted``: what a replica of an earlier revision is built from (an aborted rollout's last good one)."""
    candidates = [spec, *(r.get("spec") or {} for r in reversed(revisions_of(status)))]
    for candidate in candidates:
        found = next((s for s in candidate.get("services", []) if s.get("name") == service), None)
        if found is not None and spec_hash(found) == wanted:
            return candidate
    return None
