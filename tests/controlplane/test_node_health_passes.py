"""Node health is looked at every ``node_check_s`` (and on full passes), not on every controller pass."""

from __future__ import annotations

import pytest

from loadmaster.manifests import NODE
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.requests.status_writes import heartbeat
from tests.controlplane.conftest import add_nodes, catch_up, clock_of

pytestmark = pytest.mark.anyio


async def states_after_a_pass(plane: ControlPlane) -> dict[str, str]:
    assert plane.controllers is not None
    await catch_up(plane)
    await plane.controllers.reconcile_once()  # an ordinary pass, not the safety tick's full one
    await catch_up(plane)
    return {name: c.obj["status"]["state"] for name, c in sorted(plane.cache.objects[NODE].items())}


async def test_a_stale_heartbeat_is_marked_at_most_node_check_s_late(plane: ControlPlane) -> None:
    assert plane.controllers is not None
    check_s = plane.controllers.node_check_s
    clock = clock_of(plane)
    await add_nodes(plane, "n1", "n2")
    assert await states_after_a_pass(plane) == {"n1": "Ready", "n2": "Ready"}
    clock.advance(91)
    await heartbeat(plane, "n1", {})
    assert await states_after_a_pass(plane) == {"n1": "Ready", "n2": "NotReady"}
    clock.advance(89)  # n1's heartbeat is 89 s old: still fresh; this pass looks (91 s since the last)
    assert await states_after_a_pass(plane) == {"n1": "Ready", "n2": "NotReady"}
    clock.advance(check_s / 2)  # now stale, but the last look was only check_s / 2 ago
    assert await states_after_a_pass(plane) == {"n1": "Ready", "n2": "NotReady"}
    clock.advance(check_s / 2)
    assert await states_after_a_pass(plane) == {"n1": "NotReady", "n2": "NotReady"}
