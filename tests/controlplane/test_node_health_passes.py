"""Node health is a timer, not a tick: the controller loop knows when the next Ready node's heartbeat window
runs out, marks it NotReady at that instant (reason NotReadyAt, audited), and a heartbeat only moves the
deadline."""

from __future__ import annotations

import pytest

from loadmaster.manifests import NODE
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.storage.store_layout import AUDIT
from loadmaster.runtime.requests.writes.status_writes import heartbeat
from loadmaster.store.codec import decode
from tests.controlplane.conftest import add_nodes, catch_up, clock_of

pytestmark = pytest.mark.anyio


async def states_after_a_pass(plane: ControlPlane) -> dict[str, str]:
    assert plane.controllers is not None
    await catch_up(plane)
    await plane.controllers.reconcile_once()  # an ordinary pass, not the safety tick's full one
    await catch_up(plane)
    return {name: c.obj["status"]["state"] for name, c in sorted(plane.cache.objects[NODE].items())}


async def test_a_silent_node_is_marked_not_ready_the_instant_its_window_runs_out(plane: ControlPlane) -> None:
    controllers = plane.controllers
    assert controllers is not None
    clock = clock_of(plane)
    await add_nodes(plane, "n1", "n2")
    assert await states_after_a_pass(plane) == {"n1": "Ready", "n2": "Ready"}
    clock.advance(60)
    await heartbeat(plane, "n1", {})
    await catch_up(plane)
    # n2 heard from 60 s ago: its window ends in 30 s; n1's in 90 s. The loop sleeps until the earliest.
    assert controllers._next_due_s() == pytest.approx(30)
    clock.advance(29.999)
    assert await states_after_a_pass(plane) == {"n1": "Ready", "n2": "Ready"}
    clock.advance(0.001)
    assert await states_after_a_pass(plane) == {"n1": "Ready", "n2": "NotReady"}
    ready = [c for c in plane.cache.objects[NODE]["n2"].obj["status"]["conditions"] if c["type"] == "Ready"]
    assert (ready[0]["status"], ready[0]["reason"]) == ("False", "NotReadyAt")
    assert controllers._next_due_s() == pytest.approx(60)  # n1 next; n2 has no deadline now
    entries, _ = await plane.store.list(AUDIT)
    not_ready = [decode(e.value) for e in entries if decode(e.value)["type"] == "node_not_ready"]
    assert [(r["object"], r["message"]) for r in not_ready] == [
        ("nodes/n2", "no heartbeat for 90s (NotReady after 90s)")
    ]


async def test_a_heartbeat_adds_no_condition_and_a_return_is_audited(plane: ControlPlane) -> None:
    clock = clock_of(plane)
    await add_nodes(plane, "n1")
    await catch_up(plane)
    before = plane.cache.objects[NODE]["n1"].obj["status"]["conditions"]
    clock.advance(30)
    await heartbeat(plane, "n1", {})
    await catch_up(plane)
    assert plane.cache.objects[NODE]["n1"].obj["status"]["conditions"] == before
    clock.advance(100)
    assert await states_after_a_pass(plane) == {"n1": "NotReady"}
    await heartbeat(plane, "n1", {})
    await catch_up(plane)
    entries, _ = await plane.store.list(AUDIT)
    kinds = [decode(e.value)["type"] for e in entries]
    assert kinds[-2:] == ["node_not_ready", "node_ready"]
