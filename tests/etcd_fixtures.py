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

import itertools
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import pytest

from loadmaster.store.etcd import EtcdStore
from loadmaster.store.interface import Store
from loadmaster.testing.etcd_cluster import EtcdCluster

_prefix_numbers = itertools.count(1)


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
    with EtcdCluster(size=3) as cluster:
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
