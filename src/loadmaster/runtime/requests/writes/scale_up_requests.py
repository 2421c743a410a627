"""Scale-up requests over the API (LRS K1, issue 14): what a provisioner reads and closes.

``GET /api/scale-up-requests`` lists the stored requests (``/scaleup/<id>``, written by the scheduler,
``runtime/scheduling/scale_up/scale_up_writes.py``), oldest first, optionally only the open or the done ones.
``POST /api/scale-up-requests/{id}/done`` closes one: ``state: done`` with who and when, and a
``scale_up_done`` audit entry in the same transaction. Closing a closed request changes nothing and
answers the record as it is (a provisioner may retry); an unknown id is a 404 naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.audit import AuditEntry
from loadmaster.runtime.plane.errors import FieldProblem, InvalidError, NotFoundError
from loadmaster.runtime.plane.storage.store_layout import SCALE_UP, scale_up_key
from loadmaster.runtime.plane.storage.store_retries import write_latest
from loadmaster.store.codec import decode, encode
from loadmaster.store.interface import Entry, Op, Put

OPEN, DONE = "open", "done"
STATES = (OPEN, DONE)


def _record(entry: Entry) -> dict[str, Any]:
    record: dict[str, Any] = decode(entry.value)
    record.setdefault("state", OPEN)  # written before requests could be closed
    return record


async def list_scale_up_requests(plane: ControlPlane, state: str | None = None) -> list[dict[str, Any]]:
    if state is not None and state not in STATES:
        problem = FieldProblem("state", f"expected one of {', '.join(STATES)}, got {state!r}")
        raise InvalidError(f"state: {problem.message}", [problem])
    entries, _ = await plane.store.list(SCALE_UP)
    records = [_record(entry) for entry in entries]
    chosen = [r for r in records if state is None or r["state"] == state]
    return sorted(chosen, key=lambda r: (str(r.get("created_at", "")), str(r.get("id", ""))))


async def close_scale_up_request(plane: ControlPlane, request_id: str, actor: str) -> dict[str, Any]:
    """Mark the request done; the record as stored afterwards."""
    key = scale_up_key(request_id)
    now = format_timestamp(plane.clock.now())

    def plan(entry: Entry | None) -> tuple[Sequence[Op], dict[str, Any]]:
        if entry is None:
            raise NotFoundError(f"scale-up request {request_id} not found")
        record = _record(entry)
        if record["state"] == DONE:
            return [], record
        record.update(state=DONE, done_at=now, done_by=actor)
        audit = AuditEntry(
            "scale_up_done",
            actor,
            f"workertemplates/{record.get('template')}",
            f"scale-up request {request_id} done",
            {"request": request_id},
        )
        ops: list[Op] = [Put(key, encode(record), expect_revision=entry.mod_revision)]
        return [*ops, *plane.audit.ops([audit])], record

    record, _ = await write_latest(
        plane.store, key, plane.write_fence, plan, what=f"scale-up request {request_id}", doing="closed"
    )
    return record
