"""SqliteStore: a durable single-server Store in ``<data_dir>/loadmaster.db`` (stdlib sqlite3, WAL).

Writes go to one dedicated writer thread, one transaction per call (sqlite_writer.py). Reads run
directly on the event loop thread through a separate read-only connection: a point read costs tens
of microseconds, less than a hop to another thread would, and WAL lets it proceed while the writer
commits. Watches are woken by the writer after each commit (watch_stream.py), with no polling.

A SqliteStore serves the event loop that first uses it (its watchers' wake-ups and its reader
connection live there); using it from another loop raises StoreError. Only one server may open a
data dir at a time (data_dir_lock.py).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from loadmaster.store.data_dir_lock import DataDirLock
from loadmaster.store.interface import (
    CompactedError,
    Entry,
    Event,
    Fence,
    Op,
    StoreError,
    UnavailableError,
)
from loadmaster.store.keys import check_key, check_prefix, prefix_end
from loadmaster.store.private_files import private_database, private_dir
from loadmaster.store.sqlite_schema import (
    DB_FILE_NAME,
    connect_reader,
    connect_writer,
    oldest_retained,
    read_meta,
)
from loadmaster.store.sqlite_writer import SqliteWriter
from loadmaster.store.txn_rules import SingleKeyWrites, validate_txn
from loadmaster.store.watch_stream import (
    DEFAULT_HISTORY_REVISIONS,
    DEFAULT_MAX_QUEUED_EVENTS,
    HistoryPage,
    WatchHub,
    check_start_revision,
    stream_events,
)

# A watch replays history this many revisions per read, so a long replay never holds one huge read
# transaction or builds one huge list.
HISTORY_PAGE_REVISIONS = 1_000


def _purge_interval(history_revisions: int) -> int:
    """Purge old history every max(1, min(1000, N // 10)) commits: rarely, but well within N."""
    return max(1, min(1_000, history_revisions // 10))


class SqliteStore(SingleKeyWrites):
    """Store backed by one SQLite file; open it with ``SqliteStore.open(data_dir)``."""

    def __init__(
        self,
        db_path: Path,
        lock: DataDirLock,
        writer_conn: sqlite3.Connection,
        history_revisions: int,
        max_queued_events: int,
    ) -> None:
        self.db_path = db_path
        self.history_revisions = history_revisions
        self._lock = lock
        self._hub = WatchHub(max_queued_events)
        self._writer = SqliteWriter(
            writer_conn, db_path, history_revisions, _purge_interval(history_revisions), self._hub.publish
        )
        self._reader: sqlite3.Connection | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    @classmethod
    def open(
        cls,
        data_dir: str | Path,
        *,
        history_revisions: int = DEFAULT_HISTORY_REVISIONS,
        max_queued_events: int = DEFAULT_MAX_QUEUED_EVENTS,
    ) -> SqliteStore:
        """Lock ``data_dir`` (creating it 0700 if needed), open or create its database (0600), start
        the writer.

        Raises StoreError if another server holds the data dir.
        """
        if history_revisions < 1:
            raise ValueError(f"history_revisions: must be >= 1, got {history_revisions}")
        if max_queued_events < 1:
            raise ValueError(f"max_queued_events: must be >= 1, got {max_queued_events}")
        directory = private_dir(Path(data_dir))
        lock = DataDirLock.acquire(directory)
        db_path = directory / DB_FILE_NAME
        try:
            private_database(db_path)
            return cls(db_path, lock, connect_writer(db_path), history_revisions, max_queued_events)
        except sqlite3.Error as exc:
            lock.release()
            raise StoreError(f"cannot open {db_path}: {exc}") from exc
        except BaseException:
            lock.release()
            raise

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """The reader connection, with SQLite's own errors turned into StoreError like every store error."""
        reader = self._check_usable()
        try:
            yield reader
        except sqlite3.Error as exc:
            raise StoreError(f"sqlite read from {self.db_path} failed: {exc}") from exc

    @staticmethod
    @contextmanager
    def _snapshot(reader: sqlite3.Connection) -> Iterator[None]:
        """One read transaction: every query inside sees the same committed state."""
        reader.execute("BEGIN")
        try:
            yield
        finally:
            reader.execute("COMMIT")

    def _check_usable(self) -> sqlite3.Connection:
        """Refuse calls after close or from a foreign event loop; return the reader connection."""
        if self._closed:
            raise UnavailableError(f"sqlite store {self.db_path} is closed")
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        elif loop is not self._loop:
            raise StoreError("a SqliteStore serves only the event loop that first used it")
        if self._reader is None:
            self._reader = connect_reader(self.db_path)
        return self._reader

    async def get(self, key: str) -> Entry | None:
        check_key(key)
        with self._reading() as reader:
            row = reader.execute(
                "SELECT value, create_revision, mod_revision FROM kv WHERE key = ?", (key,)
            ).fetchone()
        return None if row is None else Entry(key, row[0], row[1], row[2])

    async def list(self, prefix: str) -> tuple[list[Entry], int]:
        """The entries under ``prefix`` and the revision they were read at, in ONE statement (one
        statement reads one snapshot): the meta row, its key NULL so that it sorts first, then the
        entries by key. As BEGIN, two queries and COMMIT it was four calls into SQLite, each giving up
        the GIL and waiting to take it back from the server's worker threads (bench/busy_cycle.py)."""
        check_prefix(prefix)
        end = prefix_end(prefix)
        entries = "SELECT key, value, create_revision, mod_revision FROM kv WHERE key >= ?"
        params: tuple[str, ...] = (prefix,)
        if end is not None:
            entries, params = entries + " AND key < ?", (prefix, end)
        query = f"SELECT NULL, NULL, NULL, revision FROM meta UNION ALL {entries} ORDER BY 1"
        with self._reading() as reader:
            meta, *rows = reader.execute(query, params).fetchall()
        return [Entry(*row) for row in rows], int(meta[3])

    async def txn(self, ops: Sequence[Op], fence: Fence | None = None) -> int:
        self._check_usable()
        validate_txn(ops, fence)  # before the hop: a malformed request never reaches the writer
        return await self._writer.submit_txn(list(ops), fence)

    async def revision(self) -> int:
        with self._reading() as reader:
            return read_meta(reader)[0]

    def known_revision(self, prefix: str = "/") -> int | None:
        return self._writer.written.under(prefix)

    async def compact(self, revision: int) -> None:
        """Drop the history of every revision older than ``revision`` (watches from there on still work)."""
        self._check_usable()
        await self._writer.submit_compact(revision)

    def watch(self, prefix: str, start_revision: int) -> AsyncIterator[Event]:
        if self._closed:
            raise UnavailableError(f"sqlite store {self.db_path} is closed")
        check_prefix(prefix)
        check_start_revision(start_revision)
        return stream_events(self._hub, self._read_history, prefix, start_revision)

    def _read_history(self, prefix: str, start_revision: int) -> HistoryPage:
        start = max(start_revision, 1)
        end = prefix_end(prefix)
        # The compaction check and the rows must come from one snapshot.
        with self._reading() as reader, self._snapshot(reader):
            current, compact_revision = read_meta(reader)
            oldest = oldest_retained(current, compact_revision, self.history_revisions)
            if start < oldest:
                raise CompactedError(start_revision, oldest)
            through = min(current, start + HISTORY_PAGE_REVISIONS - 1)
            query = "SELECT kind, key, value, revision FROM history WHERE revision BETWEEN ? AND ?"
            params: tuple[int | str, ...] = (start, through)
            if prefix:
                query += " AND key >= ?"
                params += (prefix,)
            if end is not None:
                query += " AND key < ?"
                params += (end,)
            rows = reader.execute(query + " ORDER BY seq", params).fetchall()
        return HistoryPage([Event(*row) for row in rows], through, current)

    async def close(self) -> None:
        """Finish queued writes, end every watch with UnavailableError, release the data dir."""
        if self._closed:
            return
        self._closed = True
        self._hub.close(f"sqlite store {self.db_path} is closed")
        try:
            await self._writer.stop()
        finally:
            if self._reader is not None:
                self._reader.close()
            self._lock.release()
