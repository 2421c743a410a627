"""Reading the audit log for the API: the entries so far, and the ones that follow (plane/audit.py
writes them)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.storage.store_layout import AUDIT
from loadmaster.runtime.requests.reads.event_feed import FeedFailed, Relist, follow
from loadmaster.store.codec import decode
from loadmaster.store.interface import Event


@dataclass(frozen=True, slots=True)
class AuditQuery:
    since: int = 0  # only entries with seq > since
    types: frozenset[str] | None = None  # None: every type

    def wants(self, record: dict[str, Any]) -> bool:
        return record["seq"] > self.since and (self.types is None or record["type"] in self.types)

    def read(self, event: Event) -> dict[str, Any] | None:
        """The entry ``event`` wrote, if this query wants it."""
        if event.value is None:
            return None
        record = decode(event.value)
        return record if self.wants(record) else None


async def audit_entries(plane: ControlPlane, query: AuditQuery) -> tuple[list[dict[str, Any]], int]:
    """The stored entries ``query`` wants, in order, and the revision they were read at."""
    entries, revision = await plane.store.list(AUDIT)
    return [record for entry in entries if query.wants(record := decode(entry.value))], revision


def audit_feed(
    plane: ControlPlane, query: AuditQuery, after_revision: int, idle_s: float
) -> AsyncGenerator[list[dict[str, Any] | Relist | FeedFailed]]:
    """The entries ``query`` wants written after ``after_revision``, as they come."""
    return follow(plane, AUDIT, after_revision + 1, query.read, idle_s)
