"""An owner with more replicas than one transaction holds (MAX_TXN_OPS = 128) gets all of them, on
every backend, and a pass stopped between two transactions resumes without duplicates.

Each test runs on a MemoryStore, a SqliteStore and a real etcd (whose --max-txn-ops is the limit).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from loadmaster.manifests import REPLICA, parse_manifests
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.leadership.leader_local import LocalLeaderElector
from loadmaster.runtime.plane.storage.store_layout import counter_key, object_prefix
from loadmaster.runtime.requests.writes.object_writes import apply_manifests
from loadmaster.store.codec import decode
from loadmaster.store.etcd import EtcdStore
from loadmaster.store.interface import MAX_TXN_OPS, Fence, Op, Store, UnavailableError
from loadmaster.store.memory import MemoryStore
from loadmaster.store.sqlite import SqliteStore
from loadmaster.testing.etcd_cluster import EtcdCluster
from loadmaster.testing.fake_clock import FakeClock
from tests.etcd_fixtures import fresh_prefix

pytestmark = pytest.mark.anyio

TASKS = 3 * MAX_TXN_OPS + 5  # four transactions' worth


class CrashAfter:
    """A store that stops (as a killed server would) after ``budget`` more write transactions."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.budget: int | None = None
        self.sizes: list[int] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)

    async def txn(self, ops: Sequence[Op], fence: Fence | None = None) -> int:
        if self.budget is not None:
            if self.budget == 0:
                raise UnavailableError("stopped between two transactions")
            self.budget -= 1
        revision = await self.store.txn(ops, fence)
        self.sizes.append(len(ops))
        return revision


@pytest.fixture(params=["memory", "sqlite", pytest.param("etcd", marks=pytest.mark.etcd)])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param == "memory":
        store: Store = MemoryStore()
    elif request.param == "sqlite":
        store = SqliteStore.open(tmp_path / "data")
    else:
        cluster: EtcdCluster = request.getfixturevalue("etcd_server")
        store = await EtcdStore.connect(cluster.url, fresh_prefix())
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
async def plane(backend: Store) -> AsyncIterator[ControlPlane]:
    crashing = CrashAfter(backend)
    plane = ControlPlane(
        crashing,  # type: ignore[arg-type]
        LocalLeaderElector(backend, "test-server"),
        backend="test",
        clock=FakeClock(),
    )
    await plane.start(run_loops=False)
    try:
        yield plane
    finally:
        await plane.close()


def crashing(plane: ControlPlane) -> CrashAfter:
    assert isinstance(plane.store, CrashAfter)
    return plane.store


async def reconcile(plane: ControlPlane) -> None:
    assert plane.controllers is not None
    await plane.cache.wait_for(await plane.store.revision())
    await plane.controllers.reconcile_once(full=True)
    await plane.cache.wait_for(await plane.store.revision())


async def stored_replicas(plane: ControlPlane) -> list[str]:
    entries, _ = await plane.store.list(object_prefix(REPLICA))
    return [entry.key.rsplit("/", 1)[1] for entry in entries]


JOB = f"""
api_version: loadmaster/v1
kind: Job
metadata: {{name: big}}
spec: {{tasks: {TASKS}, command: ["true"], resources: {{cpu: 10m, memory: 1Mi}}}}
"""

DEPLOYMENT = f"""
api_version: loadmaster/v1
kind: Deployment
metadata: {{name: big}}
spec:
  services:
    - name: api
      image: registry.example/api:1
      replicas: {TASKS}
      resources: {{cpu: 10m, memory: 1Mi}}
"""


async def test_a_job_with_more_tasks_than_a_transaction_holds_gets_every_replica(plane: ControlPlane) -> None:
    await apply_manifests(plane, parse_manifests(JOB), "user")
    crashing(plane).sizes.clear()
    await reconcile(plane)
    assert sorted(await stored_replicas(plane)) == sorted(f"big-{i}" for i in range(TASKS))
    assert crashing(plane).sizes and max(crashing(plane).sizes) <= MAX_TXN_OPS - 1


@pytest.mark.parametrize("stop_after", [1, 2], ids=["after-one-chunk", "after-two-chunks"])
async def test_a_job_pass_stopped_between_chunks_resumes_without_duplicates(
    plane: ControlPlane, stop_after: int
) -> None:
    await apply_manifests(plane, parse_manifests(JOB), "user")
    crashing(plane).budget = stop_after
    with pytest.raises(UnavailableError):
        await reconcile(plane)
    partial = await stored_replicas(plane)
    assert 0 < len(partial) < TASKS  # it really stopped half way
    crashing(plane).budget = None
    await reconcile(plane)
    names = await stored_replicas(plane)
    assert sorted(names) == sorted(f"big-{i}" for i in range(TASKS))  # every index exactly once


@pytest.mark.parametrize("stop_after", [1, 2], ids=["after-one-chunk", "after-two-chunks"])
async def test_a_service_pass_stopped_between_chunks_resumes_without_duplicates(
    plane: ControlPlane, stop_after: int
) -> None:
    await apply_manifests(plane, parse_manifests(DEPLOYMENT), "user")
    crashing(plane).budget = stop_after
    with pytest.raises(UnavailableError):
        await reconcile(plane)
    partial = await stored_replicas(plane)
    counter = await plane.store.get(counter_key("big", "api"))
    assert counter is not None and decode(counter.value)["next_index"] == len(partial) < TASKS
    crashing(plane).budget = None
    await reconcile(plane)
    names = await stored_replicas(plane)
    assert sorted(names) == sorted(f"big-api-{i}" for i in range(TASKS))  # no index skipped or doubled
    counter = await plane.store.get(counter_key("big", "api"))
    assert counter is not None and decode(counter.value)["next_index"] == TASKS
