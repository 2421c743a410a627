"""The audit log: one numbered entry per thing that happened (apply, delete, cordon, schedule, evict,
scale-up, leadership), written in the same transaction as the change it records.

Entries are ``/audit/<seq>`` with a 12-digit sequence number, so they list in order. Only the leader
writes (every write is fenced), so one in-process counter hands out numbers; each transaction also
stores the highest number it used in ``/counters/audit``. Transactions may commit out of order, so a
new leader starts from that counter and steps over any entry within the next PROBE_WINDOW numbers
(numbers of refused transactions are skipped, so later entries may sit after a small gap).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.runtime.plane.clock import Clock
from loadmaster.runtime.plane.storage.store_layout import AUDIT_COUNTER, audit_key
from loadmaster.store.codec import decode, encode
from loadmaster.store.interface import Op, Put, Store

# Transactions in flight at once never number more entries than this, so no entry lies further out.
PROBE_WINDOW = 256


@dataclass(frozen=True, slots=True)
class AuditEntry:
    type: str  # apply | delete | cordon | uncordon | schedule | evict | scale_up | leadership | ...
    actor: str  # who did it: a role ("admin", "user", "agent") or a component ("scheduler")
    object: str  # what it is about: "deployments/shop", "replicas" for a batch
    message: str
    details: dict[str, Any] = field(default_factory=dict)


class AuditLog:
    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock
        self._last_seq: int | None = None

    async def resume(self) -> None:
        """Continue numbering after the highest entry in the store (called when leadership begins)."""
        entry = await self._store.get(AUDIT_COUNTER)
        counted = int(decode(entry.value)["seq"]) if entry is not None else 0
        last = counted
        for seq in range(counted + 1, counted + 1 + PROBE_WINDOW):
            if await self._store.get(audit_key(seq)) is not None:
                last = seq
        self._last_seq = last

    def entry_put(self, entry: AuditEntry) -> Put:
        """The put that records ``entry`` under the next number (must not exist yet)."""
        if self._last_seq is None:
            raise RuntimeError("AuditLog.resume() must run before entries are written")
        self._last_seq += 1
        record = {
            "seq": self._last_seq,
            "time": format_timestamp(self._clock.now()),
            "type": entry.type,
            "actor": entry.actor,
            "object": entry.object,
            "message": entry.message,
            "details": entry.details,
        }
        return Put(audit_key(self._last_seq), encode(record), expect_revision=0)

    @property
    def last_seq(self) -> int:
        """The number of the entry most recently handed out."""
        if self._last_seq is None:
            raise RuntimeError("AuditLog.resume() must run before entries are written")
        return self._last_seq

    def counter_put(self) -> Put:
        """The put of the highest number handed out so far; one per transaction that records entries."""
        if self._last_seq is None:
            raise RuntimeError("AuditLog.resume() must run before entries are written")
        return Put(AUDIT_COUNTER, encode({"seq": self._last_seq}))

    def ops(self, entries: Sequence[AuditEntry]) -> list[Op]:
        """The puts that record ``entries`` plus the counter: len(entries) + 1 ops (none for no entries)."""
        if not entries:
            return []
        puts: list[Op] = [self.entry_put(entry) for entry in entries]
        return [*puts, self.counter_put()]
