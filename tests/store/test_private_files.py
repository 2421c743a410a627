"""The data dir is 0700 and the SQLite database (with its -wal and -shm) 0600, even under umask 000."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadmaster.runtime.plane.clock import SystemClock
from loadmaster.runtime.plane.tokens import ensure_admin_token
from loadmaster.store.data_dir_lock import LOCK_FILE_NAME
from loadmaster.store.memory import MemoryStore
from loadmaster.store.sqlite import SqliteStore
from loadmaster.store.sqlite_schema import DB_FILE_NAME

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_a_new_sqlite_data_dir_and_its_files_are_private_under_umask_000(
    tmp_path: Path, permissive_umask: None
) -> None:
    data_dir = tmp_path / "nested" / "data"
    store = SqliteStore.open(data_dir)
    try:
        await store.put("/objects/queues/a", b"{}")
        await ensure_admin_token(store, data_dir, SystemClock())
        files = {path.name: mode(path) for path in data_dir.iterdir()}
    finally:
        await store.close()
    assert mode(data_dir) == 0o700
    assert {f"{DB_FILE_NAME}-wal", f"{DB_FILE_NAME}-shm"} <= files.keys()  # the companions were checked
    assert files == dict.fromkeys(files, 0o600), files
    assert LOCK_FILE_NAME in files and "admin-token" in files


async def test_a_database_left_world_readable_by_an_older_server_is_made_private_when_opened(
    tmp_path: Path, permissive_umask: None
) -> None:
    store = SqliteStore.open(tmp_path / "data")
    await store.put("/objects/queues/a", b"{}")
    await store.close()
    db_path = tmp_path / "data" / DB_FILE_NAME
    db_path.chmod(0o644)
    store = SqliteStore.open(tmp_path / "data")
    try:
        assert mode(db_path) == 0o600
        assert (await store.get("/objects/queues/a")) is not None  # still the same database
    finally:
        await store.close()


async def test_a_server_without_sqlite_still_keeps_its_data_dir_private(
    tmp_path: Path, permissive_umask: None
) -> None:
    path, _ = await ensure_admin_token(MemoryStore(), tmp_path / "data", SystemClock())
    assert mode(tmp_path / "data") == 0o700
    assert mode(path) == 0o600
