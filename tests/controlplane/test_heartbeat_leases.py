"""A heartbeat that changes nothing but the time writes only the node's lease (store-layout.md,
"Heartbeats"): the node object keeps its revision, every reader still sees the new ``last_heartbeat``,
a restarted cache folds the lease in again, a NotReady mark computed before a heartbeat cannot overrule
it, and a deleted node takes its lease with it."""

from __future__ import annotations

import pytest

from loadmaster.controllers.changes import MarkNodeNotReady
from loadmaster.manifests import NODE
from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.object_cache import ObjectCache
from loadmaster.runtime.plane.storage.store_layout import heartbeat_key
from loadmaster.runtime.reconciling.writes.change_writes import change_ops
from loadmaster.runtime.requests.writes.object_writes import delete_object
from loadmaster.runtime.requests.writes.status_writes import heartbeat, heartbeat_many
from loadmaster.store.interface import ConflictError
from tests.controlplane.conftest import add_nodes, catch_up, clock_of

pytestmark = pytest.mark.anyio


async def test_a_bare_heartbeat_of_a_ready_node_moves_its_time_but_not_its_revision(
    plane: ControlPlane,
) -> None:
    clock = clock_of(plane)
    await add_nodes(plane, "n1")
    await catch_up(plane)
    revision = plane.cache.objects[NODE]["n1"].mod_revision
    clock.advance(30)
    answer = await heartbeat(plane, "n1", {})
    await catch_up(plane)
    cached = plane.cache.objects[NODE]["n1"]
    assert cached.mod_revision == revision
    assert cached.obj["status"]["last_heartbeat"] == format_timestamp(clock.now())
    assert answer["status"]["last_heartbeat"] == format_timestamp(clock.now())
    assert await plane.store.get(heartbeat_key("n1")) is not None


async def test_a_heartbeat_that_brings_a_node_back_writes_the_node(plane: ControlPlane) -> None:
    clock = clock_of(plane)
    await add_nodes(plane, "n1")
    await catch_up(plane)
    assert plane.controllers is not None
    clock.advance(100)
    await plane.controllers.reconcile_once()
    await catch_up(plane)
    not_ready = plane.cache.objects[NODE]["n1"]
    assert not_ready.obj["status"]["state"] == "NotReady"
    await heartbeat(plane, "n1", {})
    await catch_up(plane)
    back = plane.cache.objects[NODE]["n1"]
    assert back.obj["status"]["state"] == "Ready"
    assert back.mod_revision > not_ready.mod_revision


async def test_a_cache_started_afresh_folds_the_lease_into_the_node(plane: ControlPlane) -> None:
    clock = clock_of(plane)
    await add_nodes(plane, "n1")
    clock.advance(45)
    await heartbeat(plane, "n1", {})
    fresh = ObjectCache(plane.store)
    await fresh.start()
    try:
        assert fresh.objects[NODE]["n1"].obj["status"]["last_heartbeat"] == format_timestamp(clock.now())
    finally:
        await fresh.close()


async def test_a_not_ready_mark_computed_before_a_heartbeat_does_not_land(plane: ControlPlane) -> None:
    clock = clock_of(plane)
    await add_nodes(plane, "n1")
    clock.advance(30)
    await heartbeat(plane, "n1", {})  # the node now has a lease
    await catch_up(plane)
    cached = plane.cache.objects[NODE]["n1"]
    mark = MarkNodeNotReady("n1", cached.mod_revision, "no heartbeat for 90s")
    ops = change_ops(plane.cache, mark, clock.now())
    assert ops is not None
    clock.advance(30)
    await heartbeat(plane, "n1", {})  # lands between the controller's read and its write
    with pytest.raises(ConflictError):
        await plane.store.txn(ops, await plane.write_fence())
    await catch_up(plane)
    assert plane.cache.objects[NODE]["n1"].obj["status"]["state"] == "Ready"


async def test_deleting_a_node_deletes_its_lease(plane: ControlPlane) -> None:
    clock = clock_of(plane)
    await add_nodes(plane, "n1")
    clock.advance(30)
    await heartbeat(plane, "n1", {})
    await delete_object(plane, NODE, "n1", "admin")
    assert await plane.store.get(heartbeat_key("n1")) is None


async def test_heartbeats_of_many_nodes_renew_leases_bring_nodes_back_and_name_the_unknown(
    plane: ControlPlane,
) -> None:
    clock = clock_of(plane)
    await add_nodes(plane, "n1", "n2")
    await catch_up(plane)
    assert plane.controllers is not None
    clock.advance(100)
    await heartbeat(plane, "n1", {})  # n1 comes back at once; n2 stays silent and goes NotReady
    await catch_up(plane)
    await plane.controllers.reconcile_once()
    await catch_up(plane)
    assert plane.cache.objects[NODE]["n2"].obj["status"]["state"] == "NotReady"
    clock.advance(30)
    refused = await heartbeat_many(plane, ["n1", "n2", "ghost"])
    await catch_up(plane)
    assert list(refused) == ["ghost"] and "ghost" in refused["ghost"]
    now = format_timestamp(clock.now())
    for name in ("n1", "n2"):
        status = plane.cache.objects[NODE][name].obj["status"]
        assert (status["state"], status["last_heartbeat"]) == ("Ready", now)
