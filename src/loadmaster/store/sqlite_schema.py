"""The SQLite store's file layout: tables, pragmas, and the connections that use them.

Tables (STRICT, so a wrong type is an error instead of a silent conversion):

* ``kv``: one row per live key: value, create_revision, mod_revision.
* ``meta``: a single row: the store ``revision`` and ``compact_revision`` (history below it may have
  been deleted; it only grows, and it changes in the same transaction as the deletion).
* ``history``: one row per event (put or delete), in commit order (``seq``), for watches.

WAL lets readers run on their own connections while the single writer commits, and
``synchronous=NORMAL`` keeps commits atomic and durable against process crashes (``kill -9``); only
the last commits before a power loss may be lost, which is what WAL+NORMAL trades for ~2.5x the
commit rate of FULL (reference/ecosystem.md).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from loadmaster.store.interface import StoreError

DB_FILE_NAME = "loadmaster.db"
SCHEMA_VERSION = 1
# A reader waits this long for a lock instead of failing at once. WAL readers almost never wait.
BUSY_TIMEOUT_MS = 5_000

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    schema_version INTEGER NOT NULL,
    revision INTEGER NOT NULL,
    compact_revision INTEGER NOT NULL
) STRICT;
INSERT OR IGNORE INTO meta (id, schema_version, revision, compact_revision)
    VALUES (1, {SCHEMA_VERSION}, 0, 1);
CREATE TABLE IF NOT EXISTS kv (
    key TEXT PRIMARY KEY,
    value BLOB NOT NULL,
    create_revision INTEGER NOT NULL,
    mod_revision INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS history (
    seq INTEGER PRIMARY KEY,
    revision INTEGER NOT NULL,
    key TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('put', 'delete')),
    value BLOB
) STRICT;
CREATE INDEX IF NOT EXISTS history_by_revision ON history (revision);
"""


def connect_writer(db_path: Path) -> sqlite3.Connection:
    """Open (creating if needed) the database for the writer thread, with the schema in place.

    ``isolation_level=None`` hands transaction control to the writer (explicit BEGIN IMMEDIATE /
    COMMIT); ``check_same_thread=False`` because it is opened here and used only by the writer thread.
    """
    conn = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}COMMIT;")
        (version,) = conn.execute("SELECT schema_version FROM meta").fetchone()
        if version != SCHEMA_VERSION:
            raise StoreError(f"{db_path}: schema version {version}, this loadmaster reads {SCHEMA_VERSION}")
    except BaseException:
        conn.close()
        raise
    return conn


def connect_reader(db_path: Path) -> sqlite3.Connection:
    """A read-only connection for the event loop thread (autocommit: each query sees the latest commit)."""
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("PRAGMA query_only=ON")
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    return conn


def read_meta(conn: sqlite3.Connection) -> tuple[int, int]:
    """(revision, compact_revision) as committed."""
    revision, compact_revision = conn.execute("SELECT revision, compact_revision FROM meta").fetchone()
    return int(revision), int(compact_revision)


def oldest_retained(revision: int, compact_revision: int, history_revisions: int) -> int:
    """The oldest revision a watch may start from: max(compact_revision, revision - N + 1, 1).

    History is kept for the newest N = ``history_revisions`` revisions; rows older than that are
    deleted in batches, but they count as compacted at once, so the answer never depends on when the
    last batch ran.
    """
    return max(compact_revision, revision - history_revisions + 1, 1)
