"""Pytest fixtures that run real etcd servers (Debian's etcd, on 127.0.0.1) for the etcd tests.

Registered for the whole suite by ``pytest_plugins`` in tests/conftest.py. Every server is killed
and its data deleted when its fixture ends (see loadmaster.testing.etcd_cluster).

* ``etcd_server``: one member for the whole session; tests share it, so each test keeps to its own
  key prefix (``etcd_prefix``) and must not stop, pause or compact it.
* ``etcd_private``: one member for one test, free to stop, restart, pause or compact.
* ``etcd_cluster3``: three members for one test, for fault tests that kill a member.
* ``open_etcd_store``: the contract suite's backend factory (tests/store/conftest.py): a fresh
  member per test (~0.1 s), because etcd's revision counter and compaction are cluster-wide and the
  contract expects an empty store whose history nobody else compacts.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import TypeVar

import pytest

from loadmaster.store.etcd import EtcdStore
from loadmaster.store.interface import Event, Store, UnavailableError
from loadmaster.testing.etcd_cluster import EtcdCluster

T = TypeVar("T")
_prefix_numbers = itertools.count(1)
_POLL_S = 0.01


@pytest.fixture(scope="session")
def etcd_server() -> Iterator[EtcdCluster]:
    with EtcdCluster(size=1) as cluster:
        yield cluster


@pytest.fixture
def etcd_private() -> Iterator[EtcdCluster]:
    with EtcdCluster(size=1) as cluster:
        yield cluster


@pytest.fixture
def etcd_cluster3() -> Iterator[EtcdCluster]:
    # Half etcd's default raft timings: a killed leader is replaced in about a second, not two.
    with EtcdCluster(size=3, heartbeat_ms=50, election_timeout_ms=500) as cluster:
        yield cluster


def fresh_prefix() -> str:
    """A key root no other test in this session uses, so a shared etcd looks empty to each test."""
    return f"/test-{next(_prefix_numbers)}"


@pytest.fixture
def etcd_prefix() -> str:
    return fresh_prefix()


@asynccontextmanager
async def open_etcd_store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    """An EtcdStore on an etcd member of its own, started for this test and killed after it."""
    with EtcdCluster(size=1) as cluster:
        store = await EtcdStore.connect(cluster.url)
        try:
            yield store
        finally:
            await store.close()


async def eventually(predicate: Callable[[], bool], timeout_s: float, what: str) -> float:
    """Poll until ``predicate()`` holds; return the seconds it took; fail naming ``what`` at the deadline."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    while not predicate():
        if loop.time() - started > timeout_s:
            raise AssertionError(f"{what}: not true after {timeout_s}s")
        await asyncio.sleep(_POLL_S)
    return loop.time() - started


async def retrying(call: Callable[[], Awaitable[T]], timeout_s: float) -> T:
    """Repeat ``call`` while etcd answers UnavailableError (a restart or an election in progress)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        try:
            return await call()
        except UnavailableError:
            if loop.time() > deadline:
                raise
            await asyncio.sleep(_POLL_S)


class WatchRecorder:
    """Collects a watch's events in a background task, and the error that ended it, if any."""

    def __init__(self, events: AsyncIterator[Event]) -> None:
        self.events: list[Event] = []
        self.error: BaseException | None = None
        self._task = asyncio.create_task(self._drain(events))

    async def _drain(self, events: AsyncIterator[Event]) -> None:
        try:
            async for event in events:
                self.events.append(event)
        except Exception as error:  # recorded for the test to assert on, not swallowed
            self.error = error

    @property
    def ended(self) -> bool:
        return self._task.done()

    async def stop(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
