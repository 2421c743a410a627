"""The leader's cleanup of ended records (LRS K2): every ``cleanup_interval`` (1 h), the ended records
(``runtime/plane/ended_records.py``) that ended more than ``cleanup_retention`` (30 d) ago are deleted.

A timer on the loop's clock (the timeline's virtual clock drives it as it drives everything else), at
k x interval after the term starts, k >= 1. Each record is deleted with CAS on the revision it was read
at, in transactions of at most ``BATCH`` deletes; the run's one ``cleanup`` audit entry (how many
records, of which kinds) rides in its last transaction. A run that finds nothing to delete writes
nothing. A leader that loses its term mid-run leaves the rest to the next leader's first run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import structlog

from loadmaster.manifests.timestamps import parse_timestamp
from loadmaster.runtime.plane.audit import AuditEntry, AuditLog
from loadmaster.runtime.plane.clock import Clock
from loadmaster.runtime.plane.ended_records import ENDED
from loadmaster.store.codec import decode
from loadmaster.store.interface import MAX_TXN_OPS, ConflictError, Delete, Fence, Op, Store

log = structlog.get_logger(__name__)

# Deletes per transaction: the fence's compare, the audit entry and the audit counter take the rest.
BATCH = MAX_TXN_OPS - 3
DEFAULT_CLEANUP_INTERVAL_S = 3600.0
DEFAULT_CLEANUP_RETENTION_S = 30 * 86400.0


@dataclass(frozen=True, slots=True)
class CleanupTiming:
    interval_s: float = DEFAULT_CLEANUP_INTERVAL_S
    retention_s: float = DEFAULT_CLEANUP_RETENTION_S


class Cleanup:
    def __init__(
        self, store: Store, clock: Clock, fence: Callable[[], Fence], audit: AuditLog, timing: CleanupTiming
    ) -> None:
        self._store, self._clock, self._fence, self._audit, self._timing = store, clock, fence, audit, timing

    async def run(self) -> None:
        """Clean up every interval until cancelled (the leadership loop cancels it when the term ends)."""
        while True:
            await self._clock.sleep(self._timing.interval_s)
            await self.clean_once()

    async def clean_once(self) -> int:
        """Delete every ended record past retention now; how many were deleted."""
        now = self._clock.now()
        entries, _ = await self._store.list(ENDED)
        expired = [entry for entry in entries if _is_expired(entry.value, now, self._timing.retention_s)]
        if not expired:
            return 0
        deleted = 0
        kinds: Counter[str] = Counter()
        for start in range(0, len(expired), BATCH):
            chunk = expired[start : start + BATCH]
            ops: list[Op] = [Delete(entry.key, expect_revision=entry.mod_revision) for entry in chunk]
            chunk_kinds = Counter(entry.key[len(ENDED) :].partition("/")[0] for entry in chunk)
            is_last = start + BATCH >= len(expired)
            if is_last:
                kinds_text = ", ".join(
                    f"{count} {plural}" for plural, count in sorted((kinds + chunk_kinds).items())
                )
                entry = AuditEntry(
                    "cleanup",
                    "controllers",
                    "ended",
                    f"deleted {deleted + len(chunk)} ended records ({kinds_text}) older than "
                    f"{timedelta(seconds=self._timing.retention_s)}",
                    {"deleted": deleted + len(chunk), "kinds": dict(sorted((kinds + chunk_kinds).items()))},
                )
                ops += self._audit.ops([entry])
            try:
                await self._store.txn(ops, self._fence())
            except ConflictError:
                log.info("cleanup: a record changed meanwhile; the next run takes it")
                continue
            deleted += len(chunk)
            kinds += chunk_kinds
        log.info("cleanup", deleted=deleted)
        return deleted


def _is_expired(value: bytes, now: datetime, retention_s: float) -> bool:
    ended_at = decode(value).get("metadata", {}).get("ended_at")
    if not isinstance(ended_at, str):
        return False  # not an ended record as this server writes them: left alone
    return (now - parse_timestamp(ended_at)).total_seconds() >= retention_s
