"""The scheduler service keeps the failed-search backoff across its cycles (core/search_backoff.py)."""

from __future__ import annotations

import pytest

from loadmaster.core.search_backoff import SearchBackoff
from loadmaster.runtime.control_plane import ControlPlane, ControlPlaneSettings
from loadmaster.runtime.requests.reads.stats import stats
from tests.controlplane.conftest import (
    PlaneFactory,
    add_nodes,
    apply,
    catch_up,
    clock_of,
    deployment,
    phase_condition,
    placements,
    replicas,
    settle,
)

pytestmark = pytest.mark.anyio
BACKOFF = SearchBackoff(consolidate_min_s=30, consolidate_max_s=300)


@pytest.fixture(params=[BACKOFF, SearchBackoff()], ids=["backoff", "off"])
async def plane(request: pytest.FixtureRequest, make_plane: PlaneFactory) -> ControlPlane:
    """A control plane (memory and SQLite stores, conftest's) with the backoff set or off."""
    return await make_plane(ControlPlaneSettings(search_backoff=request.param))


async def stuck(plane: ControlPlane) -> None:
    """Two 4-CPU nodes each running a 3-CPU replica, and a 2-CPU replica waiting: 2 CPUs are free in
    all, but neither running replica can go anywhere, so consolidate's search for it fails."""
    await add_nodes(plane, "n1", "n2", cpu="4")
    await apply(plane, deployment("a", replicas=2, cpu="3", extra="preemptible: true"))
    await settle(plane)
    await apply(plane, deployment("p", replicas=1, cpu="2", extra="preemptible: true"))
    await settle(plane)


def reason_of_p(plane: ControlPlane) -> str:
    return str(phase_condition(replicas(plane)["p-api-0"])["details"]["reason"])


async def cycle_at(plane: ControlPlane, seconds_later: float) -> None:
    assert plane.scheduler is not None
    clock_of(plane).advance(seconds_later)
    await catch_up(plane)
    await plane.scheduler.reconcile_once(force=True)
    await catch_up(plane)


async def test_a_failed_search_rests_until_its_time_unless_the_admin_triggers_a_cycle(
    plane: ControlPlane,
) -> None:
    await stuck(plane)
    assert placements(plane)["p-api-0"] is None
    backoff_on = plane.settings.search_backoff.enabled
    failed = "consolidate: no victim set lets it fit"

    def resting(seconds: int) -> str:
        backoff = "failed-search backoff after 1 failed search"
        return f"consolidate: not searched until {seconds} s from now ({backoff})"

    # settle ran a cycle after the one whose search failed: with the backoff, p was not searched again
    assert reason_of_p(plane) == (resting(30) if backoff_on else failed)
    assert stats(plane)["resting_searches"] == ({"consolidate": 1} if backoff_on else {})
    await cycle_at(plane, 10)
    assert reason_of_p(plane) == (resting(20) if backoff_on else failed)
    assert plane.scheduler is not None
    plane.scheduler.trigger()  # every backoff is cut short, the searches' rests too
    await cycle_at(plane, 1)
    assert reason_of_p(plane) == failed  # searched (and failed) again
    # (p has made four attempts now: the service's own retry backoff keeps it out of the next cycles)
    assert stats(plane)["resting_searches"] == ({"consolidate": 1} if backoff_on else {})
