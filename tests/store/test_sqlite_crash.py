"""kill -9 of a process writing to a SqliteStore: every batch is whole or absent after reopening."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from loadmaster.store.sqlite import SqliteStore

CHILD = Path(__file__).with_name("crash_writer.py")
BATCH_KEYS = 60  # as in crash_writer.py
START_TIMEOUT_S = 20


def start_writer(data_dir: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(CHILD), str(data_dir), *extra], stdout=subprocess.PIPE, text=True
    )


def wait_for_first_commit(child: subprocess.Popen[str]) -> None:
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line.startswith("committed"), f"the writer did not start (exit code {child.poll()})"


def kill(child: subprocess.Popen[str]) -> None:
    child.send_signal(signal.SIGKILL)
    assert child.wait(timeout=START_TIMEOUT_S) == -signal.SIGKILL


async def read_back(data_dir: Path) -> tuple[int, dict[str, tuple[bytes, int, int]], int]:
    """(last batch, {key: (value, create_revision, mod_revision)}, store revision), via a real reopen.

    Reopening also proves the kernel released the dead writer's data-dir lock.
    """
    store = SqliteStore.open(data_dir)
    try:
        counter = await store.get("/crash/counter")
        assert counter is not None
        entries, revision = await store.list("/crash/0")
    finally:
        await store.close()
    assert counter.mod_revision == revision, "the last txn must be the one that moved the counter"
    kv = {e.key: (e.value, e.create_revision, e.mod_revision) for e in entries}
    return int(counter.value), kv, revision


def assert_consistent(
    data_dir: Path, last_batch: int, kv: dict[str, tuple[bytes, int, int]], revision: int
) -> None:
    # Batch b is written at revision b + 1 (every batch is one txn), and deletes batch b - 2.
    assert revision == last_batch + 1
    expected_batches = {b for b in (last_batch - 1, last_batch) if b >= 0}
    per_batch = Counter(int(key.split("/")[2]) for key in kv)
    assert per_batch == dict.fromkeys(expected_batches, BATCH_KEYS)
    for key, (value, create_revision, mod_revision) in kv.items():
        batch = int(key.split("/")[2])
        assert value.startswith(b"%d:" % batch)
        assert create_revision == mod_revision == batch + 1
    with sqlite3.connect(data_dir / "loadmaster.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        meta_revision, max_history, max_mod = conn.execute(
            "SELECT (SELECT revision FROM meta), (SELECT max(revision) FROM history), "
            "(SELECT max(mod_revision) FROM kv)"
        ).fetchone()
        assert meta_revision == max_history == max_mod == revision
        events_per_revision = dict(conn.execute("SELECT revision, count(*) FROM history GROUP BY revision"))
    # A batch's history is whole too: its puts, its deletes (from batch 2 on) and the counter.
    assert events_per_revision == {
        b + 1: BATCH_KEYS + 1 + (BATCH_KEYS if b >= 2 else 0) for b in range(last_batch + 1)
    }


def test_a_writer_killed_inside_a_transaction_leaves_that_batch_absent(tmp_path: Path) -> None:
    child = start_writer(tmp_path, "3")  # dies after writing batch 3's rows, before its COMMIT
    assert child.wait(timeout=START_TIMEOUT_S) == -signal.SIGKILL
    last_batch, kv, revision = asyncio.run(read_back(tmp_path))
    assert last_batch == 2
    assert_consistent(tmp_path, last_batch, kv, revision)


def test_a_writer_killed_at_random_moments_leaves_every_batch_whole_or_absent(tmp_path: Path) -> None:
    previous = -1
    for delay_s in (0.05, 0.2, 0.35):
        child = start_writer(tmp_path)
        try:
            wait_for_first_commit(child)
            time.sleep(delay_s)  # real time on purpose: the kill must land while it writes
        finally:
            kill(child)
        last_batch, kv, revision = asyncio.run(read_back(tmp_path))
        assert last_batch > previous, "every run resumes after the last batch and commits at least one"
        assert_consistent(tmp_path, last_batch, kv, revision)
        previous = last_batch
