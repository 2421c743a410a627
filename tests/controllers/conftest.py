"""A control plane on a MemoryStore with a fake clock and no background loops: tests run passes by hand."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.leadership.leader_local import LocalLeaderElector
from loadmaster.store.memory import MemoryStore
from loadmaster.testing.fake_clock import FakeClock


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(name="plane")
async def fixture_plane() -> AsyncIterator[ControlPlane]:
    store = MemoryStore()
    plane = ControlPlane(store, LocalLeaderElector(store, "test-server"), backend="memory", clock=FakeClock())
    await plane.start(run_loops=False)
    yield plane
    await plane.close()
    await store.close()


async def catch_up(plane: ControlPlane) -> None:
    """Wait until the cache holds every write made so far."""
    await plane.cache.wait_for(await plane.store.revision())
