"""Control planes on a MemoryStore and on a SqliteStore, with a fake clock and no background loops.

Each test drives the leader's loops by hand (``settle``): the controllers and the scheduler run one
pass at a time, and time moves only when the test advances the clock.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from loadmaster.manifests import REPLICA, parse_manifests
from loadmaster.runtime.control_plane import ControlPlane, ControlPlaneSettings
from loadmaster.runtime.plane.leadership.leader_local import LocalLeaderElector
from loadmaster.runtime.requests.writes.object_writes import apply_manifests
from loadmaster.runtime.requests.writes.status_writes import register_node
from loadmaster.store.interface import Store
from loadmaster.store.memory import MemoryStore
from loadmaster.store.sqlite import SqliteStore
from loadmaster.testing.fake_clock import FakeClock

PlaneFactory = Callable[..., Awaitable[ControlPlane]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["memory", "sqlite"])
async def make_plane(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[PlaneFactory]:
    opened: list[tuple[ControlPlane, Store]] = []

    async def make(settings: ControlPlaneSettings | None = None) -> ControlPlane:
        if request.param == "memory":
            store: Store = MemoryStore()
        else:
            store = SqliteStore.open(tmp_path / f"plane-{len(opened)}")
        plane = ControlPlane(
            store,
            LocalLeaderElector(store, "test-server"),
            backend=request.param,
            clock=FakeClock(),
            settings=settings,
        )
        await plane.start(run_loops=False)
        opened.append((plane, store))
        return plane

    yield make
    for plane, store in opened:
        await plane.close()
        await store.close()


@pytest.fixture
async def plane(make_plane: PlaneFactory) -> ControlPlane:
    return await make_plane()


def clock_of(plane: ControlPlane) -> FakeClock:
    assert isinstance(plane.clock, FakeClock)
    return plane.clock


async def catch_up(plane: ControlPlane) -> None:
    """Wait until the cache holds every write made so far."""
    await plane.cache.wait_for(await plane.store.revision())


async def settle(plane: ControlPlane, rounds: int = 6) -> None:
    """Run controllers and scheduler until a round changes nothing (as the loops would, minus timers)."""
    assert plane.controllers is not None and plane.scheduler is not None
    for _ in range(rounds):
        await plane.cache.wait_for(await plane.store.revision())
        written = (await plane.controllers.reconcile_once(full=True)).written
        await plane.cache.wait_for(await plane.store.revision())
        report = await plane.scheduler.reconcile_once()
        await plane.cache.wait_for(await plane.store.revision())
        placed = report is not None and any(kind != "wait" for kind in report.decisions)
        if not written and not placed:  # a replica that still waits is no progress
            return
    raise AssertionError("the control plane did not settle")


async def add_nodes(
    plane: ControlPlane, *names: str, cpu: str = "4", memory: str = "8Gi", **extra: Any
) -> None:
    for name in names:
        await register_node(
            plane, {"name": name, "capacity": {"cpu": cpu, "memory": memory}, **extra}, "agent"
        )


async def apply(plane: ControlPlane, text: str) -> list[dict[str, str]]:
    return await apply_manifests(plane, parse_manifests(text), "user")


def replicas(plane: ControlPlane) -> dict[str, dict[str, Any]]:
    return {name: cached.obj for name, cached in sorted(plane.cache.objects[REPLICA].items())}


def placements(plane: ControlPlane) -> dict[str, str | None]:
    return {name: obj["status"].get("node_ref") for name, obj in replicas(plane).items()}


def phase_condition(obj: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in obj["status"]["conditions"] if c["type"] == "Phase")


def deployment(
    name: str = "shop", replicas: int = 3, placement: str = "spread", cpu: str = "500m", extra: str = ""
) -> str:
    return f"""
api_version: loadmaster/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  services:
    - name: api
      image: registry.example/api:1
      placement: {placement}
      {"" if placement == "global" else f"replicas: {replicas}"}
      resources: {{cpu: {cpu}, memory: 64Mi}}
      {extra}
"""
