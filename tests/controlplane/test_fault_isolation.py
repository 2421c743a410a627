"""One object the engine cannot handle, next to a normal deployment: the normal one is still scheduled.

The poisoned objects are written straight to the store, as a server from before the admission bounds
(or a bug) would have left them: the API refuses them today.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from loadmaster.manifests import DEPLOYMENT, JOB, NODE, QUEUE
from loadmaster.runtime.control_plane import ControlPlane, ControlPlaneSettings
from loadmaster.runtime.plane.leadership.leader_local import LocalLeaderElector
from loadmaster.runtime.plane.pass_loop import PassTiming
from loadmaster.runtime.plane.storage.store_layout import encode_object, object_key
from loadmaster.runtime.requests.writes.status_writes import heartbeat
from loadmaster.store.memory import MemoryStore
from tests.controlplane.conftest import add_nodes, apply, deployment, phase_condition, replicas, settle

pytestmark = pytest.mark.anyio

WAIT_S = 20.0  # generous: a busy 2-core machine; the loops themselves take milliseconds


def stored(kind: str, name: str, spec: dict[str, Any]) -> tuple[str, bytes]:
    obj = {
        "api_version": "loadmaster/v1",
        "kind": kind,
        "metadata": {"name": name, "created_at": "2026-11-21T10:00:00Z", "generation": 1},
        "spec": spec,
    }
    return object_key(kind, name), encode_object(obj)


def service(**fields: Any) -> dict[str, Any]:
    base = {"name": "api", "image": "x", "replicas": 1, "placement": "spread", "priority": 0}
    return {"services": [{**base, **fields}]}


POISONED = {
    "deployment-cpu-1e30": stored(DEPLOYMENT, "bad", service(resources={"cpu": "1e30"})),
    "deployment-memory-1e30": stored(DEPLOYMENT, "bad", service(resources={"memory": 1e30})),
    "node-capacity-1e30": stored(NODE, "huge", {"capacity": {"cpu": "1e30", "memory": "1Gi"}}),
    "queue-deserved-1e30": stored(QUEUE, "q", {"deserved": {"cpu": "1e30"}, "priority": 0}),
}
POISONED_OWNERS = {
    "deployment-replicas-1e30": stored(DEPLOYMENT, "bad", service(replicas=10**30)),
    "deployment-replicas-not-a-number": stored(DEPLOYMENT, "bad", service(replicas="many")),
    "job-tasks-1e30": stored(JOB, "bad", {"tasks": 10**30, "min_available": 1, "image": "x"}),
}


@pytest.mark.parametrize("poison", [pytest.param(v, id=k) for k, v in POISONED.items()])
async def test_an_object_the_engine_cannot_convert_is_skipped_and_the_others_are_scheduled(
    plane: ControlPlane, poison: tuple[str, bytes]
) -> None:
    await add_nodes(plane, "n1")
    await plane.store.put(*poison)
    await apply(plane, deployment(name="good", replicas=1))
    await settle(plane)
    assert replicas(plane)["good-api-0"]["status"]["phase"] == "Scheduled"
    metrics = plane.metrics.render().decode()
    assert 'loadmaster_skipped_objects_total{kind="' in metrics and 'reason="out_of_range"} 1.0' in metrics
    if "bad-api-0" in replicas(plane):  # a poisoned deployment's replica says why it waits
        condition = phase_condition(replicas(plane)["bad-api-0"])
        assert condition["reason"] == "InvalidSpec"
        assert "above the limit" in condition["message"]


@pytest.mark.parametrize("poison", [pytest.param(v, id=k) for k, v in POISONED_OWNERS.items()])
async def test_a_controller_error_for_one_owner_leaves_the_others_reconciled_and_the_leader_in_place(
    poison: tuple[str, bytes],
) -> None:
    store = MemoryStore()
    settings = ControlPlaneSettings(loops=PassTiming(debounce_s=0.01, safety_tick_s=0.2), resign_pause_s=0.01)
    plane = ControlPlane(store, LocalLeaderElector(store, "server-1"), backend="memory", settings=settings)
    await store.put(*poison)
    await plane.start()
    try:
        assert await plane.wait_leading(WAIT_S)
        await add_nodes(plane, "n1")
        await apply(plane, deployment(name="good", replicas=1))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT_S
        while replicas(plane).get("good-api-0", {}).get("status", {}).get("phase") != "Scheduled":
            assert loop.time() < deadline, f"good-api-0 was not scheduled; terms: {plane.leadership.terms}"
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.5)  # a few more passes (safety tick 0.2 s), each meeting the poisoned owner
        assert plane.leadership.terms == 1
        assert plane.is_leader
        assert 'loadmaster_controller_errors_total{kind="' in plane.metrics.render().decode()
    finally:
        await plane.close()
        await store.close()


async def test_node_capacity_reads_are_counted_by_success_and_a_heartbeat_alone_reads_nothing(
    plane: ControlPlane,
) -> None:
    def fetches() -> dict[str, float]:
        text = plane.metrics.render().decode()
        return {
            success: float(value)
            for success, value in re.findall(
                r'^loadmaster_store_capacity_fetches_total\{success="(\w+)"\} (\S+)$', text, re.M
            )
        }

    await add_nodes(plane, "n1")
    await settle(plane)
    assert fetches() == {"true": 1.0}  # its registration
    await plane.store.put(*POISONED["node-capacity-1e30"])
    await settle(plane)
    read = fetches()
    assert read["true"] == 1.0 and read["false"] >= 1.0  # each version of the unreadable node, once
    await heartbeat(plane, "n1", None)
    await settle(plane)
    assert fetches() == read  # the heartbeat changed no capacity: nothing read again
