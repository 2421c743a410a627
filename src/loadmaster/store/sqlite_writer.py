"""The SQLite store's one writer thread: each write call is one job, one transaction, one thread hop.

Crossing threads costs 150-250 us per hop (reference/ecosystem.md), more than a whole small
transaction, so a job carries a complete unit of work (a txn of up to 128 ops, or a compaction) and
runs it between BEGIN IMMEDIATE and COMMIT. Any error rolls the transaction back, so a failed
compare or a crash mid-job leaves the database as it was.

After each commit the writer schedules, on the caller's event loop, first the publication of the
commit's events to live watchers, then the caller's result. Both go through the same FIFO
(``call_soon_threadsafe``) in commit order, so watchers see commits in order and before the writer
of a commit resumes.
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from loadmaster.store.interface import Event, Fence, Op, StoreError
from loadmaster.store.revisions_by_group import RevisionsByGroup
from loadmaster.store.sqlite_schema import oldest_retained, read_meta
from loadmaster.store.txn_rules import plan_txn

Publish = Callable[[Sequence[Event]], None]
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class _Job:
    work: Callable[[], tuple[Any, list[Event]]]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]


def _settle(future: asyncio.Future[Any], publish: Publish, events: list[Event], result: Any) -> None:
    """Runs on the event loop: publish the commit, then wake the caller (unless it stopped waiting)."""
    if events:
        publish(events)
    if future.done():  # the caller was cancelled; the commit stands regardless
        return
    if isinstance(result, BaseException):
        future.set_exception(result)
    else:
        future.set_result(result)


class SqliteWriter:
    """Owns the write connection; applies txns and compactions on a dedicated thread."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        db_path: Path,
        history_revisions: int,
        purge_every: int,
        publish: Publish,
    ) -> None:
        self._conn = conn
        self.db_path = db_path
        self._history_revisions = history_revisions
        self._purge_every = purge_every
        self._publish = publish
        # The single writer is the only one who changes meta, so it can keep the counters in memory.
        self._revision, self._compact_revision = read_meta(conn)
        # The last write to each group of keys, read by the event loop (revisions_by_group.py); what was
        # committed before this process opened the store counts as written at the revision it found.
        self.written = RevisionsByGroup(self._revision)
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="loadmaster-sqlite-writer", daemon=True)
        self._thread.start()

    def submit_txn(self, ops: Sequence[Op], fence: Fence | None) -> asyncio.Future[int]:
        return self._submit(lambda: self._apply_txn(ops, fence))

    def submit_compact(self, revision: int) -> asyncio.Future[None]:
        def work() -> tuple[None, list[Event]]:
            self._apply_compact(revision)
            return None, []

        return self._submit(work)

    def _submit(self, work: Callable[[], tuple[Any, list[Event]]]) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._jobs.put(_Job(work, loop, future))
        return future

    async def stop(self) -> None:
        """Finish the queued jobs, then end the thread and close the connection."""
        self._jobs.put(None)
        await asyncio.to_thread(self._thread.join)

    def _run(self) -> None:
        try:
            while (job := self._jobs.get()) is not None:
                result: Any
                events: list[Event] = []
                # Errors are not lost here: each one becomes the result the caller's await raises.
                try:
                    result, events = job.work()
                except sqlite3.Error as exc:  # disk full, I/O error...: a StoreError like every store error
                    result = StoreError(f"sqlite write to {self.db_path} failed: {exc}")
                    result.__cause__ = exc
                except Exception as exc:  # ConflictError, FencedError, ValueError
                    result = exc
                try:
                    job.loop.call_soon_threadsafe(_settle, job.future, self._publish, events, result)
                except RuntimeError:
                    # The caller's loop is closed: nobody is left to wake, and the commit stands.
                    continue
        finally:
            self._conn.close()

    def _in_transaction(self, body: Callable[[], _T]) -> _T:
        """Run ``body`` between BEGIN IMMEDIATE and COMMIT; any exception rolls everything back."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            outcome = body()
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return outcome

    def _apply_txn(self, ops: Sequence[Op], fence: Fence | None) -> tuple[int, list[Event]]:
        revision = self._revision + 1
        events, compact_revision = self._in_transaction(lambda: self._write_txn(ops, fence, revision))
        # Only a committed transaction moves the in-memory counters.
        if events:
            self._revision, self._compact_revision = revision, compact_revision
            self.written.record((event.key for event in events), revision)  # before the caller is told
        return self._revision, events

    def _write_txn(self, ops: Sequence[Op], fence: Fence | None, revision: int) -> tuple[list[Event], int]:
        keys = [op.key for op in ops] + ([fence.key] if fence is not None else [])
        rows = self._conn.execute(
            f"SELECT key, create_revision, mod_revision FROM kv WHERE key IN ({','.join('?' * len(keys))})",
            keys,
        ).fetchall()
        create_revisions: dict[str, int] = {key: create for key, create, _ in rows}
        mod_revisions: dict[str, int] = {key: mod for key, _, mod in rows}
        fence_create = create_revisions.get(fence.key) if fence is not None else None
        events = plan_txn(ops, fence, mod_revisions, fence_create, revision)
        if not events:  # nothing changes: like etcd, the revision stays where it is
            return events, self._compact_revision
        self._write_events(events, create_revisions)
        self._conn.execute("UPDATE meta SET revision = ?", (revision,))
        compact_revision = self._compact_revision
        # Purging in batches keeps the per-commit cost flat; the rows in between already count as
        # compacted (sqlite_schema.oldest_retained), so no watch can tell the difference.
        if revision % self._purge_every == 0:
            oldest = oldest_retained(revision, compact_revision, self._history_revisions)
            compact_revision = self._purge(oldest)
        return events, compact_revision

    def _write_events(self, events: list[Event], create_revisions: dict[str, int]) -> None:
        conn = self._conn
        puts = [
            (e.key, e.value, create_revisions.get(e.key, e.revision), e.revision)
            for e in events
            if e.kind == "put"
        ]
        if puts:
            conn.executemany(
                "INSERT INTO kv (key, value, create_revision, mod_revision) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value, "
                "mod_revision = excluded.mod_revision",
                puts,
            )
        deletes = [(e.key,) for e in events if e.kind == "delete"]
        if deletes:
            conn.executemany("DELETE FROM kv WHERE key = ?", deletes)
        conn.executemany(
            "INSERT INTO history (revision, key, kind, value) VALUES (?, ?, ?, ?)",
            [(e.revision, e.key, e.kind, e.value) for e in events],
        )

    def _purge(self, oldest: int) -> int:
        """Delete history below ``oldest`` and record it as the compact revision; returns the new one."""
        if oldest <= self._compact_revision:
            return self._compact_revision
        self._conn.execute("DELETE FROM history WHERE revision < ?", (oldest,))
        self._conn.execute("UPDATE meta SET compact_revision = ?", (oldest,))
        return oldest

    def _apply_compact(self, revision: int) -> None:
        """etcd's compact: drop the history of every revision older than ``revision``."""
        if revision > self._revision:
            raise ValueError(f"revision: cannot compact to {revision}, the store is at {self._revision}")
        self._compact_revision = self._in_transaction(lambda: self._purge(revision))
