"""SqliteStore specifics: files on disk, persistence, the data-dir lock, compaction, threads and loops."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from pathlib import Path

import pytest

from loadmaster.store.interface import CompactedError, Entry, Event, Put, StoreError
from loadmaster.store.sqlite import SqliteStore

pytestmark = pytest.mark.anyio


async def test_open_creates_the_data_dir_with_a_wal_database_and_a_pid_lock(tmp_path: Path) -> None:
    data_dir = tmp_path / "nested" / "data"
    store = SqliteStore.open(data_dir)
    try:
        await store.put("/a", b"1")
        assert (data_dir / "loadmaster.db").is_file()
        assert (data_dir / "server.lock").read_text() == f"{os.getpid()}\n"
        with sqlite3.connect(data_dir / "loadmaster.db") as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        await store.close()
    assert (data_dir / "server.lock").read_text() == ""


async def test_everything_survives_close_and_reopen(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path)
    first = await store.put("/a", b"1")
    second = await store.txn([Put("/a", b"2"), Put("/b", b"3")])
    await store.delete("/b")
    before = await store.list("/")
    await store.close()

    reopened = SqliteStore.open(tmp_path)
    try:
        assert await reopened.list("/") == before
        assert await reopened.get("/a") == Entry("/a", b"2", first, second)
        events = reopened.watch("/", 1)
        async with asyncio.timeout(5):
            replayed = [await anext(events) for _ in range(4)]
        assert [(e.kind, e.key, e.revision) for e in replayed] == [
            ("put", "/a", first),
            ("put", "/a", second),
            ("put", "/b", second),
            ("delete", "/b", second + 1),
        ]
        await events.aclose()  # type: ignore[attr-defined]
        assert await reopened.put("/c", b"4") == second + 2
    finally:
        await reopened.close()


async def test_a_second_opener_of_the_data_dir_is_refused_with_the_holders_pid(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path)
    try:
        expected = (
            f"data dir {tmp_path} is in use by another loadmaster server (pid {os.getpid()}); "
            "stop it or use another --data-dir"
        )
        with pytest.raises(StoreError) as error:
            SqliteStore.open(tmp_path)
        assert str(error.value) == expected
        assert await store.put("/still-works", b"") == 1
    finally:
        await store.close()
    await SqliteStore.open(tmp_path).close()  # free again once the holder closed


async def test_the_lock_is_released_on_close_so_the_dir_can_be_reopened(tmp_path: Path) -> None:
    await SqliteStore.open(tmp_path).close()
    store = SqliteStore.open(tmp_path)
    await store.close()
    await store.close()  # closing twice is harmless


async def test_old_history_rows_are_purged_and_compaction_survives_reopen(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path, history_revisions=4)
    for i in range(20):
        await store.put("/k", str(i).encode())
    await store.close()
    with sqlite3.connect(tmp_path / "loadmaster.db") as conn:
        revisions = [row[0] for row in conn.execute("SELECT revision FROM history ORDER BY seq")]
        assert revisions == [17, 18, 19, 20]
        assert conn.execute("SELECT revision, compact_revision FROM meta").fetchone() == (20, 17)

    # A larger retention after reopening cannot bring deleted history back.
    reopened = SqliteStore.open(tmp_path, history_revisions=1_000)
    try:
        with pytest.raises(CompactedError) as error:
            await anext(reopened.watch("/", 1))
        assert error.value.oldest == 17
    finally:
        await reopened.close()


async def test_concurrent_writers_get_distinct_consecutive_revisions(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path)
    try:
        revisions = await asyncio.gather(*(store.put(f"/k/{i:02d}", b"") for i in range(50)))
        assert sorted(revisions) == list(range(1, 51))
        entries, revision = await store.list("/k/")
        assert revision == 50
        assert {entry.key: entry.mod_revision for entry in entries} == {
            f"/k/{i:02d}": r for i, r in enumerate(revisions)
        }
    finally:
        await store.close()


async def test_a_cancelled_write_leaves_the_store_consistent_and_usable(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path)
    try:
        events = store.watch("/", 1)
        task = asyncio.ensure_future(store.put("/a", b"1"))
        await asyncio.sleep(0)  # the job is handed to the writer, then its caller gives up
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        after = await store.put("/b", b"2")
        entry = await store.get("/a")
        # The cancelled put was already queued, so it commits; either way the revisions must agree.
        assert after == (2 if entry is not None else 1)
        async with asyncio.timeout(5):
            seen = [await anext(events) for _ in range(after)]
        assert [e.revision for e in seen] == list(range(1, after + 1))
        assert seen[-1] == Event("put", "/b", b"2", after)
        await events.aclose()  # type: ignore[attr-defined]
    finally:
        await store.close()


def test_a_store_refuses_to_be_used_from_a_second_event_loop(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path)
    try:
        assert asyncio.run(store.put("/a", b"1")) == 1
        with pytest.raises(StoreError, match="event loop"):
            asyncio.run(store.get("/a"))
    finally:
        asyncio.run(store.close())


def test_a_database_of_another_schema_version_is_refused(tmp_path: Path) -> None:
    asyncio.run(SqliteStore.open(tmp_path).close())
    with sqlite3.connect(tmp_path / "loadmaster.db") as conn:
        conn.execute("UPDATE meta SET schema_version = 99")
    with pytest.raises(StoreError, match="schema version 99"):
        SqliteStore.open(tmp_path)
    # The failed open released the lock: a second try fails on the schema again, not on the lock.
    with pytest.raises(StoreError, match="schema version 99"):
        SqliteStore.open(tmp_path)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        pytest.param("history_revisions", 0, id="no-history"),
        pytest.param("max_queued_events", 0, id="no-watch-queue"),
    ],
)
def test_nonsensical_options_are_refused(tmp_path: Path, option: str, value: int) -> None:
    with pytest.raises(ValueError, match=option):
        SqliteStore.open(tmp_path, **{option: value})
    assert not (tmp_path / "server.lock").exists()


async def test_database_errors_reach_the_caller_as_store_errors(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path)
    try:
        await store.put("/a", b"1")
        with sqlite3.connect(tmp_path / "loadmaster.db") as vandal:  # break the schema behind its back
            vandal.execute("DROP TABLE kv")
        with pytest.raises(StoreError, match=r"sqlite write to .* failed: no such table: kv"):
            await store.put("/a", b"2")
        with pytest.raises(StoreError, match=r"sqlite read from .* failed: no such table: kv"):
            await store.get("/a")
        assert await store.revision() == 1  # the failed write left the rest untouched
    finally:
        await store.close()


def test_a_file_that_is_not_a_database_is_refused_and_the_lock_released(tmp_path: Path) -> None:
    (tmp_path / "loadmaster.db").write_bytes(b"this is not an SQLite database, just some text" * 10)
    with pytest.raises(StoreError, match=r"cannot open .*loadmaster\.db: file is not a database"):
        SqliteStore.open(tmp_path)
    assert (tmp_path / "server.lock").read_text() == ""
