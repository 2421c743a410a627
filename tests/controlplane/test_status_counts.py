"""The stats' replicas by phase and nodes by state are kept one cache change at a time, and always equal
a count made afresh over the cache."""

from __future__ import annotations

from collections import Counter

import pytest

from loadmaster.manifests import NODE, REPLICA
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.requests.writes.object_writes import delete_object
from tests.controlplane.conftest import add_nodes, apply, catch_up, clock_of, deployment, settle

pytestmark = pytest.mark.anyio


def recounted(plane: ControlPlane, kind: str, field: str, default: str) -> Counter[str]:
    return Counter(
        str(c.obj.get("status", {}).get(field, default)) for c in plane.cache.objects[kind].values()
    )


def assert_counts_true(plane: ControlPlane) -> None:
    assert plane.status_counts.replica_phases == recounted(plane, REPLICA, "phase", "Pending")
    assert plane.status_counts.node_states == recounted(plane, NODE, "state", "NotReady")


async def test_the_counts_follow_applies_placements_deletes_and_nodes_going_not_ready(
    plane: ControlPlane,
) -> None:
    await add_nodes(plane, "n1", "n2", cpu="1")
    await apply(plane, deployment("shop", replicas=3, cpu="600m"))
    await settle(plane)
    assert_counts_true(plane)
    assert plane.status_counts.replica_phases == Counter({"Scheduled": 2, "Pending": 1})
    await delete_object(plane, "Deployment", "shop", "user")
    await settle(plane)
    assert_counts_true(plane)
    clock_of(plane).advance(plane.settings.not_ready_after_s + 1)
    await settle(plane)
    await catch_up(plane)
    assert_counts_true(plane)
    assert plane.status_counts.node_states == Counter({"NotReady": 2})
