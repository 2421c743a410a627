"""Store backends for the contract suite (test_contract.py runs every test against each of them).

Adding a backend is one entry in BACKENDS: a name, and an async context manager factory that gets
the pytest request (so it may use other fixtures, e.g. a server started once per session) and
yields a fresh, empty store that every backend-agnostic test can use. Besides the Store protocol,
the contract uses ``compact(revision)`` (etcd's compaction), which every backend provides.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, aclosing, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from loadmaster.store.interface import Event, Store
from loadmaster.store.memory import MemoryStore
from loadmaster.store.sqlite import SqliteStore
from tests.etcd_fixtures import open_etcd_store


@dataclass(frozen=True)
class Backend:
    open: Callable[[pytest.FixtureRequest], AbstractAsyncContextManager[Store]]
    marks: tuple[pytest.MarkDecorator, ...] = field(default=())


@asynccontextmanager
async def open_memory(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    store = MemoryStore()
    try:
        yield store
    finally:
        await store.close()


@asynccontextmanager
async def open_sqlite(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    tmp_path: Path = request.getfixturevalue("tmp_path")
    store = SqliteStore.open(tmp_path / "data")
    try:
        yield store
    finally:
        await store.close()


BACKENDS: dict[str, Backend] = {
    "memory": Backend(open_memory),
    "sqlite": Backend(open_sqlite),
    "etcd": Backend(open_etcd_store, marks=(pytest.mark.etcd,)),
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(
    params=[pytest.param(name, marks=backend.marks, id=name) for name, backend in BACKENDS.items()]
)
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    """A fresh, empty store of each backend in BACKENDS."""
    async with BACKENDS[request.param].open(request) as opened:
        yield opened


WATCH_TIMEOUT_S = 5.0
# How long "no further event" is waited for. Events are published right after each commit, so a
# missing event would have arrived long before this.
QUIET_PERIOD_S = 0.05


class WatchCollector:
    """Drains a watch in a background task, so a test can wait for events without cancelling it.

    (Cancelling a pending ``anext`` on an async generator ends the generator, so a test cannot simply
    time out a read and carry on with the same watch.)
    """

    def __init__(self, events: AsyncIterator[Event]) -> None:
        self.received: list[Event] = []
        self._taken = 0
        self._error_reported = False
        self._changed = asyncio.Event()
        self._task = asyncio.create_task(self._drain(events))

    async def _drain(self, events: AsyncIterator[Event]) -> None:
        try:
            async with aclosing(events):  # type: ignore[type-var]
                async for event in events:
                    self.received.append(event)
                    self._changed.set()
        finally:
            self._changed.set()

    async def take(self, count: int) -> list[Event]:
        """The next ``count`` events; re-raises the watch's error if it ends first."""
        async with asyncio.timeout(WATCH_TIMEOUT_S):
            while len(self.received) - self._taken < count:
                if self._task.done():
                    self._error_reported = True
                    self._task.result()  # raises the watch's exception, if any
                    raise AssertionError(f"the watch ended after {self.received}")
                await self._changed.wait()
                self._changed.clear()
        taken = self.received[self._taken : self._taken + count]
        self._taken += count
        return taken

    async def is_quiet(self) -> bool:
        """True if no event beyond those taken arrives within QUIET_PERIOD_S."""
        await asyncio.sleep(QUIET_PERIOD_S)
        return len(self.received) == self._taken

    async def stop(self) -> None:
        """End the watch; an error it raised that no ``take`` reported is raised here."""
        if self._task.done():
            if not self._error_reported:
                self._task.result()
            return
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            if not self._task.cancelled():  # the test itself is being cancelled: let that through
                raise


@pytest.fixture
def collect() -> Callable[[AsyncIterator[Event]], AbstractAsyncContextManager[WatchCollector]]:
    """``async with collect(store.watch(prefix, rev)) as events: await events.take(2)``."""

    @asynccontextmanager
    async def collecting(events: AsyncIterator[Event]) -> AsyncIterator[WatchCollector]:
        collector = WatchCollector(events)
        try:
            yield collector
        finally:
            await collector.stop()

    return collecting
