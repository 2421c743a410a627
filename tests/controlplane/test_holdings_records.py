"""What a replica holds on its node is on record: the GPU devices a bind gave it (``status.devices``,
kept by every later cycle) and, with ``address: true``, its address-pool slot; a replica placed without
a bind (a replacement created on a reserved node) gets both from the next cycle."""

from __future__ import annotations

from typing import Any

import pytest

from loadmaster.manifests import REPLICA
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.requests.writes.object_update import update_object
from loadmaster.runtime.requests.writes.object_writes import delete_object
from loadmaster.runtime.requests.writes.status_writes import register_node, report_replica_status
from tests.controlplane.conftest import apply, catch_up, deployment, replicas, settle

pytestmark = pytest.mark.anyio


async def add_node(plane: ControlPlane, name: str, gpus: int = 0, addresses: int = 0) -> None:
    capacity: dict[str, Any] = {"cpu": "16", "memory": "64Gi", "gpu": gpus, "addresses": addresses}
    await register_node(plane, {"name": name, "capacity": capacity}, "agent")


def holdings(plane: ControlPlane) -> dict[str, tuple[Any, Any]]:
    return {
        name: (obj["status"].get("devices"), obj["status"].get("address_slot"))
        for name, obj in replicas(plane).items()
    }


async def test_binds_record_distinct_devices_and_slots_and_later_cycles_keep_them(
    plane: ControlPlane,
) -> None:
    await add_node(plane, "g1", gpus=2, addresses=2)
    await apply(plane, deployment("infer", replicas=2, extra="gpus: 1\n      address: true"))
    await settle(plane)
    first = holdings(plane)
    assert sorted(first.values()) == [([0], 0), ([1], 1)]
    # The replica on device 0 and slot 0 goes; its successor takes exactly what it freed, and the other
    # keeps its own (by the placement rule alone, the survivor would now sit on device 0).
    gone = next(name for name, held in first.items() if held == ([0], 0))
    kept = next(name for name in first if name != gone)
    await delete_object(plane, REPLICA, gone, "user")
    await catch_up(plane)
    await report_replica_status(plane, gone, {"phase": "Terminated"})  # as its agent would
    await settle(plane)
    after = holdings(plane)
    assert gone not in after and len(after) == 2
    assert after[kept] == first[kept]
    assert sorted(after.values()) == [([0], 0), ([1], 1)]


async def test_a_replica_placed_without_a_bind_gets_its_devices_and_slot_from_the_next_cycle(
    plane: ControlPlane,
) -> None:
    await add_node(plane, "g1", gpus=2, addresses=2)
    await apply(plane, deployment("infer", replicas=1, extra="gpus: 1\n      address: true"))
    await settle(plane)
    (name,) = replicas(plane)

    def forget(obj: dict[str, Any]) -> dict[str, Any]:  # as a replacement bound to a reserved node is made
        status = {k: v for k, v in obj["status"].items() if k not in ("devices", "address_slot")}
        return {**obj, "status": status}

    await update_object(plane, REPLICA, name, forget)
    await catch_up(plane)
    assert holdings(plane)[name] == (None, None)
    await settle(plane)
    assert holdings(plane)[name] == ([0], 0)
